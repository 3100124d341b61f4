#!/bin/sh
# Re-measures fidelity/reference.json: runs the seed article's crawler for
# real (python3 asyncio, standard library only) three times per fidelity
# scenario. About four minutes of real time; run it on a quiet machine.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for s in seed bucket-binds quota-binds-retry-after quota-binds-no-retry-after hosts; do
	python3 seed_crawler.py "$s" --repeats 3 >> "$tmp"
done
python3 - "$tmp" <<'PY'
import json, platform, sys, datetime
runs = [json.loads(line) for line in open(sys.argv[1])]
ref = {"measured": datetime.date.today().isoformat(), "python": platform.python_version(),
       "machine": platform.machine() + ", " + platform.system(),
       "command": "fidelity/measure.sh (python3 fidelity/seed_crawler.py NAME --repeats 3 for each scenario)",
       "runs": runs}
json.dump(ref, open("reference.json", "w"), indent=1)
PY
echo "wrote $(pwd)/reference.json"
