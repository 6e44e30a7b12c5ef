"""The execution layer: a study turned into stored trials, on this host or on many.

run/    the runner: prepare, plan, session, slots, the keeper of environments, warm-ups, measured
        sections, disturbance, adaptive trials, duet mode, exit profiles, density sweeps
fleet/  one study on many hosts (Celery with a Redis broker): app, lease, unit, worker, status

May import results (adaptive trials ask the analysis what is undecided), study, measure,
machinery, foundations and core; fleet may import run, never the reverse.
"""
