"""Reading the region around the selection from a Krita document, and pasting a result back as a
new paint layer masked by the selection. Pixel work goes through QImage (no Python per-pixel
loops)."""
import sys

from PyQt5.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PyQt5.QtGui import QImage

from . import transparency_mask


class CanvasError(Exception):
    pass


class Region:
    """The rectangle sent to the server: the selection's bounds grown by a margin, clamped."""

    def __init__(self, doc, x, y, w, h, image, selection):
        self.doc, self.x, self.y, self.w, self.h = doc, x, y, w, h
        self.image = image          # QImage ARGB32: the document's pixels in the rectangle
        self.selection = selection  # bytes, one per pixel (0 = unselected, 255 = selected)

    def image_png(self):
        # The image's alpha is not used by the server: send opaque RGB.
        return png_bytes(self.image.convertToFormat(QImage.Format_RGB32))

    def mask_png(self):
        # Native API: white (>= 128) = regenerate. The selection's bytes are that grey mask.
        return png_bytes(QImage(self.selection, self.w, self.h, self.w, QImage.Format_Grayscale8).copy())


def png_bytes(image):
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise CanvasError("could not encode a PNG")
    buffer.close()
    return data.data()


def _image_from_bgra(data, w, h):
    # Krita's 8-bit RGBA pixelData is B,G,R,A per pixel: on a little-endian machine that is
    # exactly QImage's ARGB32 in memory, so no byte shuffling is needed; big-endian swaps.
    image = QImage(data, w, h, w * 4, QImage.Format_ARGB32).copy()  # copy: own the bytes
    if sys.byteorder == "big":
        image = image.rgbSwapped()
    return image


def _bgra_from_image(image):
    image = image.convertToFormat(QImage.Format_ARGB32)
    if sys.byteorder == "big":
        image = image.rgbSwapped()
    bits = image.constBits()
    bits.setsize(image.sizeInBytes())
    return bytes(bits)


def read_region(doc, margin_ratio=0.25, min_margin=32):
    if doc is None:
        raise CanvasError("Open an image first.")
    if doc.colorModel() != "RGBA" or doc.colorDepth() != "U8":
        raise CanvasError("FlashPS needs an 8-bit RGB document (this one is %s/%s): use Image ▸ Convert "
                          "Image Color Space." % (doc.colorModel(), doc.colorDepth()))
    selection = doc.selection()
    if selection is None or selection.width() <= 0 or selection.height() <= 0:
        raise CanvasError("Select the region to regenerate first (any selection tool).")
    sx, sy, sw, sh = selection.x(), selection.y(), selection.width(), selection.height()
    margin = max(min_margin, int(max(sw, sh) * margin_ratio))  # context for the model
    x0, y0 = max(0, sx - margin), max(0, sy - margin)
    x1, y1 = min(doc.width(), sx + sw + margin), min(doc.height(), sy + sh + margin)
    w, h = x1 - x0, y1 - y0
    if w <= 0 or h <= 0:
        raise CanvasError("The selection lies outside the image.")
    pixels = doc.pixelData(x0, y0, w, h).data()
    mask = selection.pixelData(x0, y0, w, h).data()
    if len(pixels) != w * h * 4 or len(mask) != w * h:
        raise CanvasError("Krita returned %d/%d bytes for a %dx%d region" % (len(pixels), len(mask), w, h))
    if not any(mask):
        raise CanvasError("The selection is empty.")
    return Region(doc, x0, y0, w, h, _image_from_bgra(pixels, w, h), mask)



def _is_mask(node):
    return node is not None and node.type().endswith("mask")


def _same(a, b):
    return a is not None and b is not None and a.uniqueId() == b.uniqueId()


def _layer_for_new_layer(doc, active):
    """The node a new layer goes above: the active layer. Krita 5.2 puts a global selection mask
    (a top-level node) on top of the stack once a selection exists, and may leave no layer or
    that mask active: a result must still land above a layer, below the mask. A layer's own
    mask stands for its layer."""
    root = doc.rootNode()
    if active is not None and not _is_mask(active) and not _same(active, root):
        return active
    if _is_mask(active) and active.parentNode() is not None and not _same(active.parentNode(), root):
        return active.parentNode()
    siblings = root.childNodes() if root is not None else []
    limit = len(siblings)
    for index, node in enumerate(siblings):
        if _same(node, active):
            limit = index
    for node in reversed(siblings[:limit]):  # the topmost layer under the mask (or of all)
        if not _is_mask(node):
            return node
    return None


def apply_result(region, png, name="FlashPS"):
    """Adds `png` as a new paint layer above the active one, holding the whole result, with a
    transparency mask made from the selection (partly selected pixels partly opaque): the edit
    stays adjustable by painting on the mask. Returns the layer."""
    result = QImage.fromData(png)
    if result.isNull():
        raise CanvasError("The server's result is not an image.")
    if result.width() != region.w or result.height() != region.h:
        result = result.scaled(region.w, region.h, Qt.IgnoreAspectRatio, Qt.SmoothTransformation)

    doc = region.doc
    if doc.rootNode() is None:  # the wrapper outlives a closed document
        raise CanvasError("The document of this result was closed.")
    selection = transparency_mask.selection_from_bytes(region.selection, region.x, region.y, region.w, region.h)
    layer = None
    try:
        if transparency_mask.has_mask_api(doc):
            layer = _add_layer(doc, name)
        else:
            layer = transparency_mask.add_layer_with_action(doc, name)
        layer.setPixelData(QByteArray(_bgra_from_image(result)), region.x, region.y, region.w, region.h)
        if transparency_mask.has_mask_api(doc):
            transparency_mask.add_mask_with_api(doc, layer, selection, "Transparency Mask")
        else:
            transparency_mask.add_mask_with_action(doc, layer, selection, "Transparency Mask")
    except transparency_mask.MaskError as error:
        if layer is not None:
            layer.remove()  # a whole result without its mask would cover the unselected pixels
        raise CanvasError(str(error))
    doc.setActiveNode(layer)
    doc.refreshProjection()
    return layer


def _add_layer(doc, name):
    layer = doc.createNode(name, "paintlayer")
    active = _layer_for_new_layer(doc, doc.activeNode())
    parent = active.parentNode() if active is not None else None
    if parent is None:  # no layer at all: put it on top
        parent, children = doc.rootNode(), doc.rootNode().childNodes()
        active = children[-1] if children else None
    if not parent.addChildNode(layer, active):
        raise transparency_mask.MaskError("Krita refused to add the layer.")
    return layer
