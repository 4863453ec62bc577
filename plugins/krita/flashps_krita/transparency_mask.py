"""A new paint layer with a transparency mask holding given selection values (soft edges stay
soft), on Krita 5.1 and later.

Krita 5.2 has an API for the mask (Document.createTransparencyMask). Krita 5.1 (Debian 12) has
none that fills a mask: a mask from Document.createNode has no pixels to write until Krita gives
it a selection. There the layer and the mask are made as a user makes them, with Krita's actions:
"Add Paint Layer" (above the active layer, then active) and "Add Transparency Mask" (on the active
layer, a copy of the global selection). Document.setActiveNode does not take effect there, so
the layer is made by the action too; undo then takes back the mask, then the layer."""
from krita import Krita, Selection
from PyQt5.QtCore import QByteArray, QCoreApplication, QEventLoop

ADD_LAYER_ACTION = "add_new_paint_layer"
ADD_MASK_ACTION = "add_new_transparency_mask"


class MaskError(Exception):
    pass


def has_mask_api(doc):
    return hasattr(doc, "createTransparencyMask")  # Krita >= 5.2


def selection_from_bytes(values, x, y, w, h):
    """A Selection holding `values` (one byte per pixel) at (x, y), nothing elsewhere."""
    selection = Selection()
    selection.setPixelData(QByteArray(bytes(values)), x, y, w, h)
    return selection


def add_mask_with_api(doc, layer, selection, name):
    mask = doc.createTransparencyMask(name)
    mask.setSelection(selection)
    if not layer.addChildNode(mask, None):
        raise MaskError("Krita refused to add the transparency mask.")
    return mask


def settle(doc):
    """Lets Krita finish the image's work and its layer panel catch up with added nodes (it
    learns of them through queued events) before the next action."""
    doc.waitForDone()
    QCoreApplication.processEvents(QEventLoop.ExcludeUserInputEvents)


def _nodes(node):
    found = []
    for child in node.childNodes():
        found.append(child)
        found.extend(_nodes(child))
    return found


def _run_action(doc, action_name):
    """Runs one of Krita's actions on `doc`; returns the nodes it added."""
    app = Krita.instance()
    window = app.activeWindow()
    view = window.activeView() if window is not None else None
    if view is None or view.document() is None or view.document() != doc:  # the action's target
        raise MaskError("Show the image of this result in the active view, then apply it.")
    action = app.action(action_name)
    if action is None:
        raise MaskError("This Krita has no '%s' action." % action_name)
    before = {node.uniqueId() for node in _nodes(doc.rootNode())}
    action.trigger()
    settle(doc)
    return [node for node in _nodes(doc.rootNode()) if node.uniqueId() not in before]


def add_layer_with_action(doc, name):
    added = [node for node in _run_action(doc, ADD_LAYER_ACTION) if node.type() == "paintlayer"]
    if len(added) != 1:
        raise MaskError("Krita did not add a paint layer (%d new)." % len(added))
    added[0].setName(name)
    return added[0]


def add_mask_with_action(doc, layer, selection, name):
    """The mask action copies the global selection: it is `selection` meanwhile, then the user's
    again (the action deselects)."""
    kept = doc.selection()
    kept = kept.duplicate() if kept is not None else None
    doc.setSelection(selection)
    try:
        added = _run_action(doc, ADD_MASK_ACTION)
    finally:
        doc.setSelection(kept)
    masks = [node for node in added if node.type() == "transparencymask"]
    if len(masks) != 1 or masks[0].parentNode().uniqueId() != layer.uniqueId():
        for node in masks:
            node.remove()
        raise MaskError("Krita did not add the transparency mask to the new layer.")
    masks[0].setName(name)
    return masks[0]
