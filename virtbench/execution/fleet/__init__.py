"""One study on many hosts: Celery with a Redis broker, one queue and one worker per host.

app      the Celery app: broker, per-host queues, delivery settings
lease    a unit's lease in Redis (heartbeat): a redelivered unit never runs beside the first
unit     the unit task: run (or resume) the study on this host, as `virtbench run` does
worker   `virtbench worker`: a Celery worker serving one host's queue, one unit at a time
enqueue  `virtbench fleet run`: the checks, the fleet row, one unit per host
status   `virtbench fleet status` and --wait: each host's state
view     a fleet's runs as one run (labels host:label) for the report family

Celery is imported only by the fleet commands: `virtbench run` never pays for it.
"""
