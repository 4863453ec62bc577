"""The FlashPS docker: settings, Generate/Cancel, progress, a result preview and Apply."""
import hashlib

from krita import DockWidget, Krita
from PyQt5.QtCore import Qt
from PyQt5.QtGui import QImage, QPixmap
from PyQt5.QtWidgets import (QCheckBox, QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                             QProgressBar, QPushButton, QSizePolicy, QSpinBox, QVBoxLayout, QWidget)

from . import canvas
from .client import Client, EditJob

DOCKER_ID = "flashps_docker"
DEFAULT_URL = "http://127.0.0.1:8188"
INSTANCES = []  # one docker per main window; the actions and the tests find them here


def _setting(key, default):
    return Krita.instance().readSetting("flashps", key, default)


class FlashPSDocker(DockWidget):
    def __init__(self):
        super().__init__()
        self.setWindowTitle("FlashPS")
        self.job, self.region, self.results, self.index = None, None, [], 0
        self.last_summary, self.captured = None, set()
        root = QWidget(self)
        layout = QVBoxLayout(root)
        form = QFormLayout()
        self.url_edit = QLineEdit(_setting("server_url", DEFAULT_URL))
        self.key_edit = QLineEdit(_setting("api_key", ""))
        self.key_edit.setEchoMode(QLineEdit.Password)
        self.key_edit.setPlaceholderText("none (loopback server)")
        self.prompt_edit = QLineEdit(_setting("prompt", ""))
        self.prompt_edit.setPlaceholderText("what to paint in the selection")
        self.seed_spin = self._spin(0, 2**31 - 1, int(_setting("seed", "0")))
        self.steps_spin = self._spin(1, 1000, int(_setting("steps", "8")))
        self.strength_spin = QDoubleSpinBox()
        self.strength_spin.setRange(0.01, 1.0)
        self.strength_spin.setSingleStep(0.05)
        self.strength_spin.setValue(float(_setting("strength", "1.0")))
        self.count_spin = self._spin(1, 16, int(_setting("count", "1")))
        self.cache_check = QCheckBox("Capture the region for cache hits")
        self.cache_check.setChecked(_setting("capture", "true") == "true")
        for label, widget in (("Server", self.url_edit), ("API key", self.key_edit), ("Prompt", self.prompt_edit),
                              ("Seed", self.seed_spin), ("Steps", self.steps_spin),
                              ("Strength", self.strength_spin), ("Variations", self.count_spin)):
            form.addRow(label, widget)
        layout.addLayout(form)
        layout.addWidget(self.cache_check)
        self.generate_button = QPushButton("Generate")
        self.cancel_button = QPushButton("Cancel")
        self.generate_button.clicked.connect(self.generate)
        self.cancel_button.clicked.connect(self.cancel)
        layout.addLayout(self._row(self.generate_button, self.cancel_button))
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        layout.addWidget(self.progress)
        self.preview = QLabel("No result yet")
        self.preview.setAlignment(Qt.AlignCenter)
        self.preview.setMinimumSize(160, 160)
        self.preview.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        layout.addWidget(self.preview)
        self.prev_button, self.next_button = QPushButton("◀ Prev"), QPushButton("Next ▶")
        self.counter = QLabel("0/0")
        self.counter.setAlignment(Qt.AlignCenter)
        self.prev_button.clicked.connect(lambda: self.show_result(self.index - 1))
        self.next_button.clicked.connect(lambda: self.show_result(self.index + 1))
        layout.addLayout(self._row(self.prev_button, self.counter, self.next_button))
        self.apply_button = QPushButton("Apply as new layer")
        self.apply_button.clicked.connect(self.apply_current)
        layout.addWidget(self.apply_button)
        self.status = QLabel("Select a region, then Generate.")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        layout.addWidget(self.status)
        layout.addStretch(1)
        self.setWidget(root)
        self._update_buttons()
        INSTANCES.append(self)

    @staticmethod
    def _spin(low, high, value):
        spin = QSpinBox()
        spin.setRange(low, high)
        spin.setValue(max(low, min(high, value)))
        return spin

    @staticmethod
    def _row(*widgets):
        row = QHBoxLayout()
        for widget in widgets:
            row.addWidget(widget)
        return row

    def canvasChanged(self, canvas_):  # required by DockWidget; the active document is read on Generate
        pass

    def save_settings(self):
        app = Krita.instance()
        for key, value in (("server_url", self.url_edit.text().strip() or DEFAULT_URL),
                           ("api_key", self.key_edit.text().strip()), ("prompt", self.prompt_edit.text()),
                           ("seed", str(self.seed_spin.value())), ("steps", str(self.steps_spin.value())),
                           ("strength", str(self.strength_spin.value())), ("count", str(self.count_spin.value())),
                           ("capture", "true" if self.cache_check.isChecked() else "false")):
            app.writeSetting("flashps", key, value)

    def set_status(self, text, error=False):
        self.status.setStyleSheet("color: #d33;" if error else "")
        self.status.setText(text)

    def busy(self):
        return self.job is not None

    def params(self):
        return {"prompt": self.prompt_edit.text(), "seed": self.seed_spin.value(),
                "steps": self.steps_spin.value(), "strength": round(self.strength_spin.value(), 4)}

    def generate(self):
        """The Generate button: reads the selection's region and starts the edits off the UI thread.
        Returns False (with the reason in the status line) when nothing was started."""
        if self.job is not None:
            return False
        self.save_settings()
        try:
            region = canvas.read_region(Krita.instance().activeDocument())
            image_png, mask_png = region.image_png(), region.mask_png()
        except canvas.CanvasError as error:
            self.set_status(str(error), error=True)
            return False
        params = self.params()
        # A template is captured once per region + settings (the server keys captures on them).
        key = hashlib.sha1(image_png + mask_png + repr(sorted(params.items())).encode()).hexdigest()
        capture = self.cache_check.isChecked() and key not in self.captured
        client = Client(self.url_edit.text() or DEFAULT_URL, self.key_edit.text())
        self.job = EditJob(client, image_png, mask_png, params, self.count_spin.value(), capture)
        self.job.progress.connect(self._on_progress)
        self.job.outcome.connect(lambda summary, r=region, k=key: self._on_outcome(summary, r, k))
        self.progress.setValue(0)
        self.set_status("Sending %dx%d pixels around the selection…" % (region.w, region.h))
        self.job.start()
        self._update_buttons()
        return True

    def cancel(self):
        if self.job is not None:
            self.job.cancel()
            self.set_status("Cancelling…")

    def _on_progress(self, percent, text):
        self.progress.setValue(percent)
        self.set_status(text)

    def _on_outcome(self, summary, region, key):
        if self.job is not None:
            self.job.wait()  # run() has returned: this is immediate
            self.job = None
        self.last_summary = summary
        if summary["ok"]:
            self.region, self.results = region, summary["results"]
            if summary["template"] is not None:
                self.captured.add(key)
            self.progress.setValue(100)
            self.set_status(self.describe(summary))
            self.show_result(0)
        else:
            self.progress.setValue(0)
            self.set_status(summary["message"], error=not summary["cancelled"])
        self._update_buttons()

    @staticmethod
    def describe(summary):
        """The status line: cache hits and seconds as the server reported them."""
        stats = [r["edit"].get("stats", {}) for r in summary["results"]]
        seconds = max((s.get("total_seconds", 0.0) for s in stats), default=0.0)
        hits = sum(1 for s in stats if s.get("cache_hit"))
        if hits == len(stats):
            text = "cache hit · %.1f s" % seconds
        elif hits:
            text = "cache hit %d/%d · %.1f s" % (hits, len(stats), seconds)
        else:
            text = "computed in full · %.1f s" % seconds
        template = summary.get("template")
        if template is not None:
            if template.get("template_hash"):
                text += " · template captured · %.1f s" % template.get("seconds", 0.0)
            else:
                text += " · no template captured: " + "; ".join(template.get("notes", []))
        return text

    def show_result(self, index):
        if not self.results:
            self.preview.setText("No result yet")
            self.counter.setText("0/0")
            return
        self.index = index % len(self.results)
        image = QImage.fromData(self.results[self.index]["png"])
        pixmap = QPixmap.fromImage(image).scaled(max(64, self.preview.width()), max(64, self.preview.height()),
                                                 Qt.KeepAspectRatio, Qt.SmoothTransformation)
        self.preview.setPixmap(pixmap)
        self.counter.setText("%d/%d · seed %d" % (self.index + 1, len(self.results),
                                                  self.results[self.index]["seed"]))
        self._update_buttons()

    def apply_current(self):
        """Apply: the shown result as a new paint layer above the active one; returns the layer."""
        if not self.results or self.region is None:
            self.set_status("Generate a result first.", error=True)
            return None
        result = self.results[self.index]
        try:
            layer = canvas.apply_result(self.region, result["png"], "FlashPS seed %d" % result["seed"])
        except canvas.CanvasError as error:
            self.set_status(str(error), error=True)
            return None
        self.set_status("Added layer '%s'." % layer.name())
        return layer

    def _update_buttons(self):
        running = self.job is not None
        self.generate_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        for button in (self.prev_button, self.next_button):
            button.setEnabled(len(self.results) > 1)
        self.apply_button.setEnabled(bool(self.results))
