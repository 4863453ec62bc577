"""Test-only startup plugin: once Krita's window is up, runs scenario.run() (which drives the
FlashPS docker through its own methods) and quits Krita. Does nothing without the variable."""
import os

from krita import Extension, Krita
from PyQt5.QtCore import QTimer


class ScenarioExtension(Extension):
    def setup(self):
        pass

    def createActions(self, window):
        if os.environ.get("FLASHPS_KRITA_TEST_DIR"):
            from . import scenario
            QTimer.singleShot(1000, scenario.run)  # after the window is shown


Krita.instance().addExtension(ScenarioExtension(Krita.instance()))
