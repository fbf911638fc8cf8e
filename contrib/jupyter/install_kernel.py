"""Installs the "sensorium" kernel spec into PREFIX/share/jupyter/kernels/sensorium.

The spec runs this folder's sensorium_kernel.py with PREFIX's Python and the given
sensorium executable (absolute paths, so a notebook runs from any folder).
"""

import argparse
import json
import os
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--prefix", required=True)
parser.add_argument("--sensorium", required=True)
args = parser.parse_args()

here = os.path.dirname(os.path.abspath(__file__))
spec_dir = os.path.join(os.path.abspath(args.prefix), "share", "jupyter", "kernels", "sensorium")
os.makedirs(spec_dir, exist_ok=True)
spec = {
    "argv": [sys.executable, os.path.join(here, "sensorium_kernel.py"), "-f", "{connection_file}",
             "--sensorium", os.path.abspath(args.sensorium)],
    "display_name": "Sensorium (Lua 5.4)",
    "language": "lua",
    "interrupt_mode": "signal",
}
with open(os.path.join(spec_dir, "kernel.json"), "w") as f:
    json.dump(spec, f, indent=2)
    f.write("\n")
print("installed kernel spec", spec_dir)
