"""HTTP client of `flashps serve` (native edit API, docs/http-api.md), standard library only.

`Client` does blocking calls; `EditJob` runs them on a QThread and posts progress and the outcome
back as Qt signals (queued to the UI thread), so Krita never waits on the network.
"""
import base64
import http.client
import json
import threading
import urllib.error
import urllib.request

from PyQt5.QtCore import QThread, pyqtSignal


class ServerError(Exception):
    """A refusal (HTTP status + the server's JSON message) or a connection problem (status None)."""

    def __init__(self, message, status=None, code=None):
        super().__init__(message)
        self.status = status
        self.code = code


class Cancelled(Exception):
    pass


def _b64(data):
    return base64.b64encode(data).decode("ascii")


class Client:
    def __init__(self, url, api_key="", timeout=30):
        self.url = (url or "").strip().rstrip("/")
        self.api_key = (api_key or "").strip()
        self.timeout = timeout

    def _open(self, method, path, body=None, timeout=None):
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            return urllib.request.urlopen(request, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as error:  # before URLError: it is one
            raise self._refusal(error) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise ServerError("Cannot reach the FlashPS server at %s (%s). Start it with `flashps serve` "
                              "or check the URL." % (self.url or "(no URL)", reason)) from None

    @staticmethod
    def _refusal(error):
        # Every error has OpenAI's shape: {"error": {"message", "type", "param", "code"}}.
        message, code = error.reason, None
        try:
            detail = json.loads(error.read().decode("utf-8"))["error"]
            message, code = detail.get("message") or message, detail.get("code")
        except (ValueError, KeyError, TypeError, OSError):
            pass
        hint = {401: " (check the API key)", 429: " (the server is busy, try again)",
                503: " (the server is busy or shutting down)"}.get(error.code, "")
        return ServerError("Server refused (HTTP %d): %s%s" % (error.code, message, hint), error.code, code)

    def call(self, method, path, body=None, timeout=None):
        with self._open(method, path, body, timeout) as response:
            try:
                return json.loads(response.read().decode("utf-8"))
            except (ValueError, OSError, http.client.HTTPException) as error:
                raise ServerError("Bad answer from %s%s: %s" % (self.url, path, error)) from None

    def submit(self, image_png, mask_png, params):
        return self.call("POST", "/v1/edits", dict(params, image=_b64(image_png), mask=_b64(mask_png)))

    def register_template(self, image_png, mask_png, params):
        return self.call("POST", "/v1/templates", dict(params, image=_b64(image_png), mask=_b64(mask_png)),
                         timeout=600)

    def cancel(self, edit_id):
        return self.call("DELETE", "/v1/edits/" + edit_id)

    def result(self, edit_id):
        try:
            with self._open("GET", "/v1/edits/%s/result" % edit_id, timeout=120) as response:
                return response.read()
        except (OSError, http.client.HTTPException) as error:
            raise ServerError("The server stopped while sending the result (%s)" % error) from None

    def events(self, edit_id):
        """Yields (event, edit) from the SSE stream, line by line, until the finished event."""
        # Keep-alive comments come every 10 s: a 40 s silence means the server is gone.
        response = self._open("GET", "/v1/edits/%s/events" % edit_id, timeout=40)
        event, data = None, []
        try:
            with response:
                for raw in response:
                    line = raw.decode("utf-8").rstrip("\r\n")
                    if line.startswith(":"):
                        continue
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].lstrip())
                    elif not line and data:
                        edit = json.loads("\n".join(data))
                        yield event, edit
                        if edit.get("finished"):
                            return
                        event, data = None, []
        except (OSError, ValueError, http.client.HTTPException) as error:
            raise ServerError("The connection to the server was lost during the edit (%s). "
                              "Did the server stop?" % error) from None
        raise ServerError("The server closed the progress stream before the edit finished "
                          "(did it stop or restart?)")


class EditJob(QThread):
    """Submits `count` edits (seeds seed..seed+count-1), follows their events, fetches the results
    and, when asked, captures a template so the next edit of the same region is a cache hit."""

    progress = pyqtSignal(int, str)   # percent, text
    outcome = pyqtSignal(object)      # {"ok", "cancelled", "message", "results", "template"}

    def __init__(self, client, image_png, mask_png, params, count=1, capture=False, parent=None):
        super().__init__(parent)
        self.client, self.image_png, self.mask_png = client, image_png, mask_png
        self.params, self.count, self.capture = dict(params), max(1, int(count)), capture
        self.ids = []
        self._cancelled = threading.Event()

    def cancel(self):
        """From the UI thread: the DELETEs run on their own thread, never blocking Krita."""
        self._cancelled.set()
        ids, client = list(self.ids), self.client

        def send():
            for edit_id in ids:
                try:
                    client.cancel(edit_id)
                except ServerError:
                    pass
        threading.Thread(target=send, daemon=True).start()

    def _check(self):
        if self._cancelled.is_set():
            raise Cancelled()

    def run(self):
        summary = {"ok": False, "cancelled": False, "message": "", "results": [], "template": None}
        try:
            seed = int(self.params.get("seed", 0))
            for i in range(self.count):
                self._check()
                edit = self.client.submit(self.image_png, self.mask_png, dict(self.params, seed=seed + i))
                self.ids.append(edit["id"])
                self.progress.emit(0, "queued %d of %d" % (i + 1, self.count))
            for i, edit_id in enumerate(self.ids):
                edit = {}
                for event, edit in self.client.events(edit_id):
                    step, steps = edit.get("step", 0), edit.get("steps", 0)
                    percent = (100 * i + 100 * step // max(1, steps)) // self.count
                    self.progress.emit(min(99, percent), "%s · variation %d/%d · step %d/%d" % (
                        event, i + 1, self.count, step, steps))
                if edit.get("outcome") == "cancelled":
                    raise Cancelled()
                if edit.get("outcome") != "done":
                    raise ServerError("The edit %s: %s" % (edit.get("outcome", "failed"),
                                                           edit.get("error", "no reason given")))
                summary["results"].append({"edit": edit, "seed": seed + i, "png": self.client.result(edit_id)})
            first = summary["results"][0]["edit"].get("stats", {})
            if self.capture and not first.get("cache_hit"):
                self._check()
                self.progress.emit(99, "capturing a template for the next edits of this region")
                summary["template"] = self.client.register_template(
                    self.image_png, self.mask_png, dict(self.params, seed=seed))
            summary["ok"] = True
        except Cancelled:
            summary.update(cancelled=True, message="Cancelled.")
            for edit_id in self.ids:  # one submitted while cancel() ran may have been missed
                try:
                    self.client.cancel(edit_id)
                except ServerError:
                    pass
        except ServerError as error:
            summary["message"] = str(error)
            if self._cancelled.is_set():
                summary.update(cancelled=True, message="Cancelled (%s)" % error)
        except Exception as error:  # never leave the docker waiting on a dead thread
            summary["message"] = "Unexpected error: %r" % (error,)
        self.outcome.emit(summary)
