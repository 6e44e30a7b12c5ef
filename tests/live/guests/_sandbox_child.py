"""Started by the sandbox tests: start an environment, print what it made, wait to be killed."""
import json
import sys
import time

from virtbench.measure.environments import create

env = create(sys.argv[1])
env.start()
print(json.dumps({"name": env._name, "workdir": str(env.work.path),
                  "netns": list(env.work.data.get("extra_netns", [])),
                  "volumes": list(env.work.data.get("volumes", []))}), flush=True)
time.sleep(600)
