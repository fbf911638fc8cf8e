"""A Jupyter kernel for Sensorium: cells run in a live simulated study world.

The kernel speaks Jupyter's messaging protocol (with jupyter_client's Session for the
wire format and signatures) and drives `sensorium repl --machine`, which answers one
JSON line per request (see Sources/SensoriumCLI/KernelEngine.swift). One study world per
kernel session; a cell whose first line is

    %%world --days 3 --participants 2 --seed 7 [--scenario FILE] [PROTOCOL]
    %%world --recording study.sqlite [--participant ID] [PROTOCOL]

starts a new world with those `sensorium repl` flags, simulated or replaying a store made
by `sensorium import` (the rest of the cell then runs in it). `print` goes to the stream, a list of rows shows as an HTML table (with the text as
the plain fallback), every chart `plot` draws or extends shows as inline SVG, an error
is an error reply with the Lua traceback, interrupt stops a running cell, and completion
and inspection come from the API description.

Usage (what `make jupyter` installs as the kernel spec):
    python sensorium_kernel.py -f CONNECTION_FILE [--sensorium PATH]
"""

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import threading

import zmq
from jupyter_client.session import Session

PROTOCOL_VERSION = "5.3"
DEFAULT_WORLD = ["--days", "3", "--participants", "1", "--seed", "7"]


class Engine:
    """The `sensorium repl --machine` child: one JSON line out, one JSON line back."""

    def __init__(self, sensorium, flags, cwd):
        self.flags = flags
        # Its own session: a SIGINT meant for a cell is forwarded by the kernel, once.
        self.proc = subprocess.Popen(
            [sensorium, "repl", "--machine", "--time-limit", "0"] + flags,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=cwd, start_new_session=True, text=True, encoding="utf-8", bufsize=1)

    def ask(self, request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read()
            raise RuntimeError("the sensorium engine stopped: " + (err.strip() or "no message"))
        return json.loads(line)

    def interrupt(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGINT)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Kernel:
    def __init__(self, connection, sensorium):
        self.sensorium = sensorium
        self.cwd = os.getcwd()
        self.session = Session(key=connection["key"].encode(), signature_scheme=connection["signature_scheme"])
        self.context = zmq.Context()
        url = "%s://%s:" % (connection["transport"], connection["ip"])
        self.shell = self.context.socket(zmq.ROUTER)
        self.control = self.context.socket(zmq.ROUTER)
        self.stdin = self.context.socket(zmq.ROUTER)
        self.iopub = self.context.socket(zmq.PUB)
        hb = self.context.socket(zmq.REP)
        self.shell.bind(url + str(connection["shell_port"]))
        self.control.bind(url + str(connection["control_port"]))
        self.stdin.bind(url + str(connection["stdin_port"]))
        self.iopub.bind(url + str(connection["iopub_port"]))
        hb.bind(url + str(connection["hb_port"]))
        threading.Thread(target=zmq.proxy, args=(hb, hb), daemon=True).start()
        self.count = 0
        self.engine = None
        self.running = False
        self.lock = threading.Lock()
        # Interrupts come as SIGINT (the default interrupt mode) or as interrupt_request.
        signal.signal(signal.SIGINT, lambda *_: self.interrupt())

    # -- the engine ---------------------------------------------------------

    def world(self, flags=None):
        if self.engine is None or (flags is not None and flags != self.engine.flags):
            if self.engine is not None:
                self.engine.stop()
            self.engine = Engine(self.sensorium, flags if flags is not None else DEFAULT_WORLD, self.cwd)
        return self.engine

    def interrupt(self):
        if self.running and self.engine is not None:
            self.engine.interrupt()

    # -- messages -------------------------------------------------------------

    def send(self, socket, kind, content, parent, ident=None):
        self.session.send(socket, kind, content, parent=parent, ident=ident)

    def publish(self, kind, content, parent):
        self.send(self.iopub, kind, content, parent)

    def status(self, state, parent):
        self.publish("status", {"execution_state": state}, parent)

    def serve(self):
        poller = zmq.Poller()
        poller.register(self.shell, zmq.POLLIN)
        poller.register(self.control, zmq.POLLIN)
        self.status("starting", {})
        while True:
            for socket, _ in poller.poll():
                idents, msg = self.session.recv(socket, copy=True)
                if msg is None:
                    continue
                if not self.dispatch(socket, idents, msg):
                    return

    def dispatch(self, socket, idents, msg):
        kind = msg["header"]["msg_type"]
        handler = getattr(self, "on_" + kind, None)
        self.status("busy", msg["header"])
        keep = True
        try:
            if handler is None:
                reply = kind.replace("_request", "_reply")
                self.send(socket, reply, {"status": "error", "ename": "NotImplemented",
                                          "evalue": kind, "traceback": []}, msg["header"], idents)
            else:
                keep = handler(socket, idents, msg)
        finally:
            self.status("idle", msg["header"])
        return keep is not False

    def on_kernel_info_request(self, socket, idents, msg):
        self.send(socket, "kernel_info_reply", {
            "status": "ok", "protocol_version": PROTOCOL_VERSION,
            "implementation": "sensorium", "implementation_version": "1",
            "language_info": {"name": "lua", "version": "5.4", "mimetype": "text/x-lua",
                              "file_extension": ".lua", "codemirror_mode": "lua", "pygments_lexer": "lua"},
            "banner": "Sensorium: Lua 5.4 in a simulated SensorKit study world",
            "help_links": [],
        }, msg["header"], idents)

    def on_execute_request(self, socket, idents, msg):
        content = msg["content"]
        code = content.get("code", "")
        silent = content.get("silent", False)
        if not silent and content.get("store_history", True):
            self.count += 1
        if not silent:
            self.publish("execute_input", {"code": code, "execution_count": self.count}, msg["header"])
        flags = None
        if code.startswith("%%world"):
            first, _, code = code.partition("\n")
            flags = shlex.split(first[len("%%world"):])
        self.running = True
        try:
            answer = self.world(flags).ask({"execute": code})
        except Exception as e:  # the engine could not start or stopped
            answer = {"error": {"message": str(e), "traceback": [str(e)]}}
            self.engine = None
        finally:
            self.running = False
        if not silent:
            if answer.get("stdout"):
                self.publish("stream", {"name": "stdout", "text": answer["stdout"]}, msg["header"])
            for svg in answer.get("svgs", []):
                self.publish("display_data", {"data": {"image/svg+xml": svg, "text/plain": "<chart>"},
                                              "metadata": {}}, msg["header"])
            if answer.get("value") is not None and not answer.get("error"):
                data = {"text/plain": answer["value"]}
                if answer.get("html"):
                    data["text/html"] = answer["html"]
                self.publish("execute_result", {"execution_count": self.count, "data": data, "metadata": {}},
                             msg["header"])
        error = answer.get("error")
        if error:
            reply = {"status": "error", "ename": "LuaError", "evalue": error["message"],
                     "traceback": error.get("traceback", []), "execution_count": self.count}
            if not silent:
                self.publish("error", {k: reply[k] for k in ("ename", "evalue", "traceback")}, msg["header"])
        else:
            reply = {"status": "ok", "execution_count": self.count, "user_expressions": {}, "payload": []}
        self.send(socket, "execute_reply", reply, msg["header"], idents)

    def on_complete_request(self, socket, idents, msg):
        content = msg["content"]
        answer = self.world().ask({"complete": content["code"], "cursor": content["cursor_pos"]})
        self.send(socket, "complete_reply", {
            "status": "ok", "matches": answer.get("matches", []), "metadata": {},
            "cursor_start": answer.get("start", content["cursor_pos"]),
            "cursor_end": answer.get("end", content["cursor_pos"]),
        }, msg["header"], idents)

    def on_inspect_request(self, socket, idents, msg):
        content = msg["content"]
        answer = self.world().ask({"inspect": content["code"], "cursor": content["cursor_pos"]})
        data = {"text/plain": answer["text"]} if answer.get("found") else {}
        self.send(socket, "inspect_reply", {"status": "ok", "found": bool(answer.get("found")),
                                            "data": data, "metadata": {}}, msg["header"], idents)

    def on_is_complete_request(self, socket, idents, msg):
        # A cell is always run whole; the engine says when a chunk is unfinished.
        self.send(socket, "is_complete_reply", {"status": "unknown"}, msg["header"], idents)

    def on_history_request(self, socket, idents, msg):
        self.send(socket, "history_reply", {"status": "ok", "history": []}, msg["header"], idents)

    def on_comm_info_request(self, socket, idents, msg):
        self.send(socket, "comm_info_reply", {"status": "ok", "comms": {}}, msg["header"], idents)

    def on_interrupt_request(self, socket, idents, msg):
        self.interrupt()
        self.send(socket, "interrupt_reply", {"status": "ok"}, msg["header"], idents)

    def on_shutdown_request(self, socket, idents, msg):
        restart = msg["content"].get("restart", False)
        if self.engine is not None:
            self.engine.stop()
            self.engine = None
        self.send(socket, "shutdown_reply", {"status": "ok", "restart": restart}, msg["header"], idents)
        return False


def main():
    parser = argparse.ArgumentParser(description="Sensorium's Jupyter kernel")
    parser.add_argument("-f", dest="connection_file", required=True)
    parser.add_argument("--sensorium", default=os.environ.get("SENSORIUM_BIN", "sensorium"))
    args = parser.parse_args()
    with open(args.connection_file) as f:
        connection = json.load(f)
    Kernel(connection, args.sensorium).serve()


if __name__ == "__main__":
    main()
