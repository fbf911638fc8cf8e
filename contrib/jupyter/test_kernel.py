"""jupyter_kernel_test's conformance tests for the "sensorium" kernel (make jupyter-test)."""

import os
import shlex
import subprocess
import tempfile
import time
import unittest

import jupyter_kernel_test
from jupyter_client.manager import start_new_kernel


class SensoriumKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "sensorium"
    language_name = "lua"
    file_extension = ".lua"

    code_hello_world = 'print("hello, world")'
    code_generate_error = 'error("on purpose")'
    code_execute_result = [
        {"code": "6 * 7", "result": "42"},
        {"code": 'sensorkit.reader "ambientLightSensor".sensor', "result": '"ambientLightSensor"'},
    ]
    code_display_data = [
        {"code": 'local plot = require "plot"\n'
                 'plot.bars("conformance", { categories = { "a", "b" }, values = { 1, 2 } })',
         "mime": "image/svg+xml"},
    ]
    completion_samples = [
        {"text": "sensorkit.re", "matches": {"sensorkit.reader", "sensorkit.requestAuthorization"}},
        {"text": 'sensorkit.reader "ambientL', "matches": {"ambientLightSensor"}},
    ]
    code_inspect_sample = "sensorkit.reader"


class SensoriumKernelBehaviour(unittest.TestCase):
    """What the conformance tests do not ask: the world persists between cells, a
    `%%world` cell sets it up, the clock moves, errors carry the Lua traceback and an
    interrupt stops a running cell."""

    @classmethod
    def setUpClass(cls):
        cls.km, cls.kc = start_new_kernel(kernel_name="sensorium")

    @classmethod
    def tearDownClass(cls):
        cls.kc.stop_channels()
        cls.km.shutdown_kernel()

    def run_cell(self, code, interrupt_after=None):
        """The execute reply's content and the cell's iopub messages (until it is idle)."""
        msg_id = self.kc.execute(code)
        if interrupt_after is not None:
            time.sleep(interrupt_after)
            self.km.interrupt_kernel()
        reply = self.kc.get_shell_msg(timeout=60)
        self.assertEqual(reply["parent_header"]["msg_id"], msg_id)
        outputs = []
        while True:
            m = self.kc.get_iopub_msg(timeout=30)
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                return reply["content"], outputs
            if m["msg_type"] not in ("status", "execute_input"):
                outputs.append(m)

    @staticmethod
    def text(outputs):
        return "".join(o["content"].get("text", "") for o in outputs if o["msg_type"] == "stream")

    @staticmethod
    def results(outputs):
        return [o["content"]["data"]["text/plain"] for o in outputs if o["msg_type"] == "execute_result"]

    def test_world_cells_clock_errors_and_interrupt(self):
        content, outputs = self.run_cell("%%world --days 2 --participants 2 --seed 3\n:participant\nn = 41")
        self.assertEqual(content["status"], "ok")
        self.assertIn("participants: P1, P2", self.text(outputs))
        content, outputs = self.run_cell("n + 1")
        self.assertEqual(self.results(outputs), ["42"])
        content, outputs = self.run_cell(":advance to tomorrow 09:00")
        self.assertIn("2026-03-03 09:00", self.text(outputs))
        content, outputs = self.run_cell("local function f() error('deep') end\nf()")
        self.assertEqual(content["status"], "error")
        self.assertIn("deep", content["evalue"])
        self.assertIn("stack traceback:", content["traceback"])
        self.assertTrue(any("stdin:1: in function" in line for line in content["traceback"]), content["traceback"])
        self.assertEqual([o["msg_type"] for o in outputs], ["error"])
        # A list of rows is a table: HTML with the text as its fallback.
        content, outputs = self.run_cell("{ { day = 'a', steps = 1 }, { day = 'b', steps = 2 } }")
        data = [o["content"]["data"] for o in outputs if o["msg_type"] == "execute_result"][0]
        self.assertIn("<th>steps</th>", data["text/html"])
        self.assertIn("steps = 2", data["text/plain"])
        # Interrupt: a cell that never ends is stopped, and the world goes on.
        content, outputs = self.run_cell("while true do end", interrupt_after=1.5)
        self.assertEqual(content["status"], "error")
        self.assertIn("interrupted", content["evalue"])
        content, outputs = self.run_cell("n * 2")
        self.assertEqual(self.results(outputs), ["82"])

    def test_world_cell_replays_a_recorded_store(self):
        """`%%world --recording STORE`: the notebook over a store `sensorium import` made
        (the MyDataHelps fixture: 864 heart-rate samples of MDH-P1's watch, 3 days)."""
        root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
        fixture = os.path.join(root, "Tests", "Fixtures", "exports", "mdh", "RK.4F2A9C.Sleep and Light Pilot_20231106-20231109")
        with tempfile.TemporaryDirectory() as folder:
            store = os.path.join(folder, "study.sqlite")
            subprocess.run([os.path.join(root, ".build", "debug", "sensorium"), "import", "--format", "mdh-json", fixture,
                            "--into", store, "--quiet"], check=True, capture_output=True)
            content, outputs = self.run_cell("%%world --recording " + shlex.quote(store) + "\n:participant")
            self.assertEqual(content["status"], "ok")
            self.assertIn("participants: MDH-P1, MDH-P2 (current: MDH-P1)", self.text(outputs))
            # What the replay says of itself comes with the cell that opened it.
            self.assertIn("replay: 5 days, 2023-11-06 00:00 to 2023-11-11 00:00 (GMT)", self.text(outputs))
            self.assertIn("warning: participant 'MDH-P1': time zone unknown, UTC assumed", self.text(outputs))
            content, outputs = self.run_cell('sensorkit.requestAuthorization({ "heartRate" }, function() end)\n'
                                             ':advance to day 6 09:00\n'
                                             'hr = sensorkit.reader("heartRate")')
            self.assertEqual(content["status"], "ok", content)
            self.assertIn("2023-11-11 09:00", self.text(outputs))
            content, outputs = self.run_cell("hr:samples { device = hr:devices()[1], from = time.studyStart() - 86400, to = time.now() }:count()")
            self.assertEqual(self.results(outputs), ["864"])


if __name__ == "__main__":
    unittest.main()
