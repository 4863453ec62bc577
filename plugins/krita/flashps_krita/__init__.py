"""FlashPS for Krita: a docker that regenerates the selection with `flashps serve`, and menu
actions (Tools ▸ Scripts) that drive it."""
from krita import DockWidgetFactory, DockWidgetFactoryBase, Extension, Krita

from .docker import DOCKER_ID, INSTANCES, FlashPSDocker


def _docker():
    """The docker of the active window (shown and raised), else the last one created."""
    window = Krita.instance().activeWindow()
    top = window.qwindow() if window is not None else None
    for docker in reversed(INSTANCES):
        if top is None or docker.window() is top:
            docker.show()
            docker.raise_()
            return docker
    return INSTANCES[-1] if INSTANCES else None


class FlashPSExtension(Extension):
    def setup(self):
        pass

    def createActions(self, window):
        for name, text, method in (("flashps_generate", "FlashPS: Regenerate Selection", "generate"),
                                   ("flashps_cancel", "FlashPS: Cancel", "cancel"),
                                   ("flashps_apply", "FlashPS: Apply Result as Layer", "apply_current")):
            action = window.createAction(name, text, "tools/scripts")
            action.triggered.connect(lambda _checked=False, m=method: _call(m))


def _call(method):
    docker = _docker()
    if docker is not None:
        getattr(docker, method)()


Krita.instance().addDockWidgetFactory(DockWidgetFactory(DOCKER_ID, DockWidgetFactoryBase.DockRight, FlashPSDocker))
Krita.instance().addExtension(FlashPSExtension(Krita.instance()))
