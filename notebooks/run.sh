#!/usr/bin/env bash
# Executes every notebook here headless, top to bottom, with the Go kernel
# gonb, installing what is missing first; a failing cell fails the script.
# Then checks that the summary tables saved in the notebooks are what a
# fresh execution prints (go test ./notebooks/ with the fresh copies).
#
#   notebooks/run.sh            execute into a temporary folder and check
#   notebooks/run.sh --save     execute in place (refresh the saved outputs;
#                               the check then only finds failed cells)
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd .. && pwd)
export PATH="$PATH:$(go env GOPATH)/bin"
export DEBIAN_FRONTEND=noninteractive

# Jupyter and nbconvert from Debian (the module proxy is the only Go source;
# PyPI is not used).
if ! /usr/bin/jupyter nbconvert --version >/dev/null 2>&1 || ! python3 -c 'import nbclient' >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  apt-get install -y -qq jupyter-notebook jupyter-nbconvert python3-ipykernel jupyter-client python3-nbclient >/dev/null
fi
# gonb v0.11.1, built from the module cache (the proxy does not list its
# versions, so `go install gonb@latest` cannot resolve it).
if ! command -v gonb >/dev/null 2>&1 || ! gonb --version 2>/dev/null | grep -q 'v0.11.1'; then
  go mod download github.com/janpfeifer/gonb@v0.11.1
  src="$(go env GOMODCACHE)/github.com/janpfeifer/gonb@v0.11.1"
  (cd "$src" && GOFLAGS=-mod=mod go build -o "$(go env GOPATH)/bin/gonb" .)
fi
if ! command -v goimports >/dev/null 2>&1; then
  GOFLAGS=-mod=mod go install golang.org/x/tools/cmd/goimports@v0.52.0
fi
if ! /usr/bin/jupyter kernelspec list 2>/dev/null | grep -q '^ *gonb '; then
  gonb --install --force_deps >/dev/null
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for nb in sizing compare-policies failure-modes; do
  echo "executing $nb.ipynb"
  if [ "${1:-}" = "--save" ]; then
    /usr/bin/jupyter nbconvert --to notebook --execute --inplace \
      --ExecutePreprocessor.timeout=1200 --ExecutePreprocessor.kernel_name=gonb "$nb.ipynb"
    cp "$nb.ipynb" "$out/$nb.ipynb"
    # The setup cell's output names this machine's paths, and execution
    # timestamps change every run: neither is saved.
    python3 - "$nb.ipynb" <<'PY'
import json, sys
path = sys.argv[1]
nb = json.load(open(path))
for c in nb["cells"]:
    c.get("metadata", {}).pop("execution", None)
    if "setup" in c.get("metadata", {}).get("tags", []):
        c["outputs"], c["execution_count"] = [], None
with open(path, "w") as f:
    json.dump(nb, f, indent=1, ensure_ascii=False)
    f.write("\n")
PY
  else
    /usr/bin/jupyter nbconvert --to notebook --execute --output-dir "$out" \
      --ExecutePreprocessor.timeout=1200 --ExecutePreprocessor.kernel_name=gonb "$nb.ipynb"
  fi
done
# The saved outputs against the fresh ones, in the numbers that matter.
(cd "$root" && LIMITSIM_NOTEBOOKS_FRESH="$out" go test -count=1 -run TestSavedOutputsAreFresh ./notebooks/)
