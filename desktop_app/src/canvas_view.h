// The canvas: the image (or a staged variation), the mask layer as a coloured overlay, zoom
// (Ctrl+wheel, fit, 100%) and pan (Space+drag, middle button, wheel), and the mask tools:
// brush and eraser (size [ / ], Alt+drag: horizontal = size, vertical = hardness), rectangle
// and lasso (Alt held on release: subtract from the mask).
#pragma once
#include <QImage>
#include <QPolygonF>
#include <QWidget>

#include <flashps/flashps.hpp>

namespace flashps_paint {

class Document;

enum class Tool { brush, eraser, rectangle, lasso };

class CanvasView : public QWidget {
  Q_OBJECT
 public:
  explicit CanvasView(Document& document, QWidget* parent = nullptr);

  void setTool(Tool tool);
  Tool tool() const { return tool_; }
  void setBrushSize(double diameter);
  void setBrushHardness(double hardness);
  const flashps::sdk::Brush& brush() const { return brush_; }

  void setOverlay(const QColor& colour, double opacity);
  // Show the mask the pipeline will use (binarized, grown, feathered) instead of the painted one.
  void setMaskPreview(bool enabled, int grow_pixels, int feather_pixels);
  // A variation shown in place of the image (null: none); showOriginal toggles before/after.
  void setStagedImage(const QImage& image);
  void setShowOriginal(bool original);
  bool showingOriginal() const { return show_original_; }

  double zoom() const { return scale_; }
  void setZoom(double scale, QPointF anchor_widget = QPointF(-1, -1));
  void fitToWindow();
  QPointF widgetToImage(QPointF point) const;
  QPointF imageToWidget(QPointF point) const;

 Q_SIGNALS:
  void brushChanged(double diameter, double hardness);
  void zoomChanged(double scale);
  void filesDropped(const QStringList& paths);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void keyReleaseEvent(QKeyEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void onImageChanged();
  void onMaskChanged(const QRect& region);
  void rebuildOverlay(const QRect& region);
  void pan(QPointF delta);

  Document& document_;
  Tool tool_ = Tool::brush;
  flashps::sdk::Brush brush_;
  QColor overlay_colour_{255, 40, 80};
  double overlay_opacity_ = 0.5;
  bool preview_ = false;
  int preview_grow_ = 0, preview_feather_ = 0;

  QImage image_, overlay_, staged_;
  bool show_original_ = false;
  double scale_ = 1.0;
  QPointF offset_;         // widget position of the image's top-left corner
  bool fit_pending_ = true;  // fit when the first image arrives

  enum class Drag { none, paint, pan, resize_brush, rectangle, lasso } drag_ = Drag::none;
  QPointF drag_start_, last_mouse_, cursor_;
  double drag_start_diameter_ = 0, drag_start_hardness_ = 0;
  QPolygonF lasso_;  // image coordinates
  bool space_held_ = false;
};

}  // namespace flashps_paint
