"""Executes a notebook headless with the "sensorium" kernel (nbclient), checks that it
produced a table (text/html) and an inline SVG chart, writes the executed notebook and its
HTML (nbconvert) into OUTDIR, and, where Debian's chromium is installed, checks that the
browser's rendering of that HTML holds the table and the chart.

    python check_notebook.py NOTEBOOK OUTDIR
"""

import base64
import os
import shutil
import subprocess
import sys

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter


def main(path, outdir):
    os.makedirs(outdir, exist_ok=True)
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name="sensorium", timeout=120,
                   resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, "the notebook raised: %s" % errors[0].get("evalue")
    tables = [o.data["text/html"] for o in outputs if "data" in o and "text/html" in o.data]
    charts = [o.data["image/svg+xml"] for o in outputs if "data" in o and "image/svg+xml" in o.data]
    assert tables and "<table>" in tables[0] and "<td>" in tables[0], "no table among the outputs"
    assert charts and charts[0].lstrip().startswith("<svg") and ("<polyline" in charts[0] or "<path" in charts[0]), \
        "no inline SVG chart among the outputs"
    executed = os.path.join(outdir, "notebook.ipynb")
    nbformat.write(nb, executed)
    html, _ = HTMLExporter().from_notebook_node(nb)
    page = os.path.join(outdir, "notebook.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write(html)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser:
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                              "file://" + os.path.abspath(page)],
                             capture_output=True, text=True, timeout=120).stdout
        # nbconvert embeds the chart as an <img> of the SVG's bytes.
        chart = base64.b64encode(charts[0].encode("utf-8")).decode("ascii")
        assert "<table>" in dom, "the browser's page lacks the table"
        assert chart in dom, "the browser's page lacks the chart"
        print("check_notebook: chromium rendered the table and the chart")
    else:
        print("check_notebook: chromium not installed; the HTML was not rendered")
    print("check_notebook: %s executed: %d table(s), %d chart(s); %s" % (path, len(tables), len(charts), page))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
