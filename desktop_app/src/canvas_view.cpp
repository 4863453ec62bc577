#include "canvas_view.h"

#include <QDragEnterEvent>
#include <QMimeData>
#include <QPainter>
#include <QPainterPath>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "document.h"
#include "image_convert.h"

namespace flashps_paint {

namespace {
constexpr double kMinZoom = 0.05, kMaxZoom = 32.0;
constexpr double kMinBrush = 1, kMaxBrush = 1000;
}  // namespace

CanvasView::CanvasView(Document& document, QWidget* parent) : QWidget(parent), document_(document) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);  // the brush outline follows the pointer
  setAcceptDrops(true);
  setMinimumSize(320, 240);
  brush_.diameter = 40;
  connect(&document_, &Document::imageChanged, this, &CanvasView::onImageChanged);
  connect(&document_, &Document::maskChanged, this, &CanvasView::onMaskChanged);
}

void CanvasView::setTool(Tool tool) {
  tool_ = tool;
  brush_.erase = tool == Tool::eraser;
  update();
}

void CanvasView::setBrushSize(double diameter) {
  brush_.diameter = std::clamp(diameter, kMinBrush, kMaxBrush);
  Q_EMIT brushChanged(brush_.diameter, brush_.hardness);
  update();
}

void CanvasView::setBrushHardness(double hardness) {
  brush_.hardness = std::clamp(hardness, 0.0, 1.0);
  Q_EMIT brushChanged(brush_.diameter, brush_.hardness);
}

void CanvasView::setOverlay(const QColor& colour, double opacity) {
  overlay_colour_ = colour;
  overlay_opacity_ = std::clamp(opacity, 0.0, 1.0);
  rebuildOverlay(QRect());
}

void CanvasView::setMaskPreview(bool enabled, int grow_pixels, int feather_pixels) {
  preview_ = enabled;
  preview_grow_ = grow_pixels;
  preview_feather_ = feather_pixels;
  rebuildOverlay(QRect());
}

void CanvasView::setStagedImage(const QImage& image) {
  staged_ = image;
  update();
}

void CanvasView::setShowOriginal(bool original) {
  show_original_ = original;
  update();
}

void CanvasView::setZoom(double scale, QPointF anchor) {
  if (anchor.x() < 0) anchor = QPointF(width() / 2.0, height() / 2.0);
  const QPointF image_point = widgetToImage(anchor);
  scale_ = std::clamp(scale, kMinZoom, kMaxZoom);
  offset_ = anchor - image_point * scale_;  // keep the point under the anchor still
  fit_pending_ = false;
  Q_EMIT zoomChanged(scale_);
  update();
}

void CanvasView::fitToWindow() {
  if (image_.isNull()) return;
  scale_ = std::clamp(std::min(double(width()) / image_.width(), double(height()) / image_.height()), kMinZoom,
                      kMaxZoom);
  offset_ = QPointF((width() - image_.width() * scale_) / 2, (height() - image_.height() * scale_) / 2);
  Q_EMIT zoomChanged(scale_);
  update();
}

QPointF CanvasView::widgetToImage(QPointF point) const { return (point - offset_) / scale_; }
QPointF CanvasView::imageToWidget(QPointF point) const { return point * scale_ + offset_; }

void CanvasView::onImageChanged() {
  const bool size_changed = image_.size() != QSize(int(document_.image().width), int(document_.image().height));
  image_ = to_qimage(document_.image());
  staged_ = QImage();
  if (size_changed || fit_pending_) {
    fit_pending_ = false;
    fitToWindow();
  }
  update();
}

void CanvasView::onMaskChanged(const QRect& region) {
  // The preview's grow/feather reach beyond the edited box: rebuild it whole.
  rebuildOverlay(preview_ ? QRect() : region);
}

void CanvasView::rebuildOverlay(const QRect& region) {
  const Image& mask = document_.mask();
  if (mask.empty()) {
    overlay_ = QImage();
  } else if (preview_) {
    overlay_ = mask_overlay(flashps::sdk::mask::effective(mask, preview_grow_, preview_feather_), overlay_colour_,
                            overlay_opacity_);
  } else if (region.isNull() || overlay_.size() != QSize(int(mask.width), int(mask.height))) {
    overlay_ = mask_overlay(mask, overlay_colour_, overlay_opacity_);
  } else {
    const QRect box = region.intersected(overlay_.rect());
    const int alpha_scale = int(overlay_opacity_ * 256);
    for (int y = box.top(); y <= box.bottom(); ++y) {
      auto* row = reinterpret_cast<QRgb*>(overlay_.scanLine(y));
      for (int x = box.left(); x <= box.right(); ++x) {
        const int alpha = (mask_at(mask, x, y) * alpha_scale) >> 8;
        row[x] = qRgba(overlay_colour_.red() * alpha / 255, overlay_colour_.green() * alpha / 255,
                       overlay_colour_.blue() * alpha / 255, alpha);
      }
    }
  }
  update();
}

void CanvasView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), QColor(48, 48, 52));
  if (image_.isNull()) {
    painter.setPen(QColor(170, 170, 170));
    painter.drawText(rect(), Qt::AlignCenter, tr("Open a PNG or JPEG (Ctrl+O) or drop one here"));
    return;
  }
  painter.setRenderHint(QPainter::SmoothPixmapTransform, scale_ < 1.0);
  const QRectF target(offset_, QSizeF(image_.width() * scale_, image_.height() * scale_));
  const bool staged = !staged_.isNull() && !show_original_;
  painter.drawImage(target, staged ? staged_ : image_);
  if (!staged) painter.drawImage(target, overlay_);
  painter.setPen(QPen(QColor(255, 255, 255, 200), 1, Qt::DashLine));
  if (drag_ == Drag::rectangle) painter.drawRect(QRectF(imageToWidget(drag_start_), imageToWidget(last_mouse_)));
  if (drag_ == Drag::lasso && lasso_.size() > 1) {
    QPolygonF shown;
    for (const QPointF& point : lasso_) shown << imageToWidget(point);
    painter.drawPolygon(shown);
  }
  if ((tool_ == Tool::brush || tool_ == Tool::eraser) && drag_ != Drag::pan && underMouse()) {
    const QPointF centre = drag_ == Drag::resize_brush ? drag_start_ : cursor_;
    const double radius = brush_.diameter / 2 * scale_;
    painter.setPen(QPen(QColor(0, 0, 0, 160), 1));
    painter.drawEllipse(centre, radius + 1, radius + 1);
    painter.setPen(QPen(QColor(255, 255, 255, 220), 1));
    painter.drawEllipse(centre, radius, radius);
    if (brush_.hardness < 1.0) painter.drawEllipse(centre, radius * brush_.hardness, radius * brush_.hardness);
  }
}

void CanvasView::resizeEvent(QResizeEvent*) {
  if (fit_pending_) fitToWindow();
}

void CanvasView::mousePressEvent(QMouseEvent* event) {
  last_mouse_ = event->position();
  if (event->button() == Qt::MiddleButton || (event->button() == Qt::LeftButton && space_held_)) {
    drag_ = Drag::pan;
    setCursor(Qt::ClosedHandCursor);
    return;
  }
  if (event->button() != Qt::LeftButton || document_.empty()) return;
  const QPointF point = widgetToImage(event->position());
  drag_start_ = point;
  last_mouse_ = point;
  switch (tool_) {
    case Tool::brush:
    case Tool::eraser:
      if (event->modifiers() & Qt::AltModifier) {
        drag_ = Drag::resize_brush;
        drag_start_ = event->position();
        drag_start_diameter_ = brush_.diameter;
        drag_start_hardness_ = brush_.hardness;
      } else {
        drag_ = Drag::paint;
        document_.beginStroke(brush_, point.x(), point.y());
      }
      break;
    case Tool::rectangle:
      drag_ = Drag::rectangle;
      break;
    case Tool::lasso:
      drag_ = Drag::lasso;
      lasso_ = QPolygonF{point};
      break;
  }
}

void CanvasView::mouseMoveEvent(QMouseEvent* event) {
  cursor_ = event->position();
  const QPointF point = widgetToImage(event->position());
  switch (drag_) {
    case Drag::pan:
      pan(event->position() - last_mouse_);
      last_mouse_ = event->position();
      return;
    case Drag::paint:
      document_.strokeTo(point.x(), point.y());
      break;
    case Drag::resize_brush: {
      // Screen pixels, so the feel does not depend on the zoom.
      const QPointF moved = event->position() - drag_start_;
      setBrushSize(drag_start_diameter_ + 2 * moved.x() / scale_);
      setBrushHardness(drag_start_hardness_ - moved.y() / 200.0);
      break;
    }
    case Drag::lasso:
      lasso_ << point;
      break;
    default:
      break;
  }
  last_mouse_ = point;
  update();
}

void CanvasView::mouseReleaseEvent(QMouseEvent* event) {
  const QPointF point = widgetToImage(event->position());
  const bool subtract = event->modifiers() & Qt::AltModifier;
  switch (drag_) {
    case Drag::paint:
      document_.endStroke();
      break;
    case Drag::rectangle: {
      const QRectF box = QRectF(drag_start_, point).normalized();
      // Pixels whose centres are inside, as the lasso.
      const QRect pixels(QPoint(int(std::ceil(box.left() - 0.5)), int(std::ceil(box.top() - 0.5))),
                         QPoint(int(std::ceil(box.right() - 0.5)) - 1, int(std::ceil(box.bottom() - 0.5)) - 1));
      if (pixels.isValid()) document_.fillRectangle(pixels, !subtract);
      break;
    }
    case Drag::lasso: {
      lasso_ << point;
      std::vector<flashps::sdk::Point> polygon;
      for (const QPointF& p : lasso_) polygon.push_back({p.x(), p.y()});
      document_.fillLasso(polygon, !subtract);
      lasso_.clear();
      break;
    }
    case Drag::pan:
      unsetCursor();
      break;
    default:
      break;
  }
  drag_ = Drag::none;
  update();
}

void CanvasView::pan(QPointF delta) {
  offset_ += delta;
  fit_pending_ = false;
  update();
}

void CanvasView::wheelEvent(QWheelEvent* event) {
  if (event->modifiers() & Qt::ControlModifier) {
    const double steps = event->angleDelta().y() / 120.0;
    setZoom(scale_ * std::pow(1.25, steps), event->position());
  } else {
    pan(QPointF(event->angleDelta()) / 4);
  }
  event->accept();
}

void CanvasView::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Space && !event->isAutoRepeat()) {
    space_held_ = true;
    setCursor(Qt::OpenHandCursor);
  } else if (event->key() == Qt::Key_BracketLeft) {
    setBrushSize(brush_.diameter / 1.2);
  } else if (event->key() == Qt::Key_BracketRight) {
    setBrushSize(brush_.diameter * 1.2);
  } else {
    QWidget::keyPressEvent(event);
  }
}

void CanvasView::keyReleaseEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Space && !event->isAutoRepeat()) {
    space_held_ = false;
    unsetCursor();
  } else {
    QWidget::keyReleaseEvent(event);
  }
}

void CanvasView::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void CanvasView::dropEvent(QDropEvent* event) {
  QStringList paths;
  for (const QUrl& url : event->mimeData()->urls())
    if (url.isLocalFile()) paths << url.toLocalFile();
  if (!paths.isEmpty()) Q_EMIT filesDropped(paths);
}

}  // namespace flashps_paint
