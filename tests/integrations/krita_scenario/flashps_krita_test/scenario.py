"""The scenario of tests/integrations/krita_test.sh, run inside a real Krita. It drives the FlashPS
docker through the methods its buttons call (generate, cancel, show_result, apply_current) and
writes report.json in $FLASHPS_KRITA_TEST_DIR; the shell test judges the report."""
import faulthandler
import json
import os
import time
import traceback

from krita import InfoObject, Krita, Selection
from PyQt5.QtCore import QByteArray, QTimer
from PyQt5.QtWidgets import QApplication

from flashps_krita import docker as docker_module

out = os.environ.get("FLASHPS_KRITA_TEST_DIR", "")
report = {"steps": []}
started = time.time()


def log(text):
    report["steps"].append(text)
    with open(os.path.join(out, "progress.log"), "a", encoding="utf-8") as f:
        f.write("%6.1f s  %s\n" % (time.time() - started, text))  # when: a slow step shows


def wait_until(predicate, seconds, what):
    deadline = time.time() + seconds
    while not predicate():
        if time.time() > deadline:
            raise RuntimeError("timed out after %d s waiting for %s" % (seconds, what))
        QApplication.processEvents()
        time.sleep(0.02)


def generate(docker, what, seconds=120):
    """Presses Generate (the same method) and waits, the UI event loop running, for the outcome."""
    started = docker.generate()
    if started:
        wait_until(lambda: not docker.busy(), seconds, what)
    summary = docker.last_summary if started else None
    entry = {"started": started, "status": docker.status.text(),
             "ok": bool(summary and summary["ok"]), "cancelled": bool(summary and summary["cancelled"]),
             "cache_hits": [r["edit"]["stats"].get("cache_hit") for r in (summary or {}).get("results", [])],
             "seeds": [r["seed"] for r in (summary or {}).get("results", [])],
             "template": bool(summary and summary["template"] and summary["template"].get("template_hash"))}
    report[what] = entry
    log("%s: %s" % (what, entry["status"]))
    return entry


def start_and_wait_running(docker, what):
    assert docker.generate(), "generate did not start: " + docker.status.text()
    wait_until(lambda: docker.status.text().startswith("running"), 120, what + " running")


def region_diff(before, after, width, height, rect):
    """Changed pixels inside and outside the selection's rectangle (RGBA bytes, row by row)."""
    x, y, w, h = rect
    inside = outside = 0
    for row in range(height):
        a = before[row * width * 4:(row + 1) * width * 4]
        b = after[row * width * 4:(row + 1) * width * 4]
        if a == b:
            continue
        for col in range(width):
            if a[col * 4:col * 4 + 4] != b[col * 4:col * 4 + 4]:
                if y <= row < y + h and x <= col < x + w:
                    inside += 1
                else:
                    outside += 1
    return {"inside_changed": inside, "inside_total": w * h,
            "outside_changed": outside, "outside_total": width * height - w * h}


def apply(docker, doc):
    """Presses Apply; returns the new layer and the composite once Krita has rendered it."""
    layer = docker.apply_current()
    assert layer is not None, "apply failed: " + docker.status.text()
    doc.waitForDone()
    doc.refreshProjection()
    doc.waitForDone()
    return layer, doc.pixelData(0, 0, doc.width(), doc.height()).data()


MAGENTA = bytes([255, 0, 255, 255])  # B, G, R, A


def composite_with_painted_layer(doc, layer, region):
    """The composite while the layer's region is opaque magenta: what the mask alone lets through
    (the server's result equals the input outside the selection, so it cannot show that)."""
    own = layer.pixelData(region.x, region.y, region.w, region.h)
    layer.setPixelData(QByteArray(MAGENTA * (region.w * region.h)), region.x, region.y, region.w, region.h)
    doc.refreshProjection()
    doc.waitForDone()
    painted = doc.pixelData(0, 0, doc.width(), doc.height()).data()
    layer.setPixelData(own, region.x, region.y, region.w, region.h)
    doc.refreshProjection()
    doc.waitForDone()
    return painted


def masked_layer_report(doc, layer, region, selected, before, after):
    """What Apply made, against the selection's bytes over the whole image (`selected`): the
    layer's transparency mask (equal to the selection, soft values included), the layer's own
    pixels (the whole result over the region, none cleared) and the composite (unchanged where
    nothing was selected, also with the layer painted over; the layer shown where all selected)."""
    width, height = doc.width(), doc.height()
    masks = [node for node in layer.childNodes() if node.type() == "transparencymask"]
    values = masks[0].pixelData(0, 0, width, height).data() if len(masks) == 1 else b""
    own = layer.pixelData(region.x, region.y, region.w, region.h).data()
    starts = [(region.y + row) * width + region.x for row in range(region.h)]
    unselected = sum(selected[start:start + region.w].count(0) for start in starts)
    painted = composite_with_painted_layer(doc, layer, region)
    changed_unselected = changed_unselected_painted = shown_painted = 0
    for index in range(width * height):
        if selected[index] == 0:
            changed_unselected += before[index * 4:index * 4 + 4] != after[index * 4:index * 4 + 4]
            changed_unselected_painted += before[index * 4:index * 4 + 4] != painted[index * 4:index * 4 + 4]
        elif selected[index] == 255:
            shown_painted += painted[index * 4:index * 4 + 4] == MAGENTA
    return {"children": ["%s:%s" % (node.name(), node.type()) for node in layer.childNodes()],
            "mask_equals_selection": len(values) == len(selected) and values == selected,
            "mask_levels": {"0": values.count(0), "255": values.count(255),
                            "partial": len(values) - values.count(0) - values.count(255)},
            "selection_partial": len(selected) - selected.count(0) - selected.count(255),
            "region_opaque": sum(1 for i in range(3, len(own), 4) if own[i] == 255),
            "region_total": region.w * region.h,
            "unselected_in_region": unselected, "unselected_changed": changed_unselected,
            "unselected_changed_painted": changed_unselected_painted, "unselected_total": selected.count(0),
            "selected_shown_painted": shown_painted, "selected_total": selected.count(255)}


def scenario():
    config = json.load(open(os.path.join(out, "config.json")))
    app = Krita.instance()
    wait_until(lambda: app.activeWindow() is not None and docker_module.INSTANCES, 60, "the window and docker")
    window = app.activeWindow()
    docker = docker_module.INSTANCES[-1]
    docker.show()
    docker.url_edit.setText(config["url"])
    docker.prompt_edit.setText("a ripe fig")
    docker.seed_spin.setValue(7)
    docker.steps_spin.setValue(2)
    docker.count_spin.setValue(1)
    docker.cache_check.setChecked(True)

    # No document yet: the docker says so, and stays usable.
    report["no_document"] = generate(docker, "no_document")

    doc = app.openDocument(config["image"])
    assert doc is not None, "openDocument failed"
    log("opened %s" % config["image"])
    window.addView(doc)
    doc.waitForDone()
    log("shown in a view")
    width, height = doc.width(), doc.height()
    rect = config["selection"]
    selection = Selection()
    selection.select(rect[0], rect[1], rect[2], rect[3], 255)
    doc.setSelection(selection)
    before = doc.pixelData(0, 0, width, height).data()
    layers_before = len(doc.rootNode().childNodes())

    generate(docker, "first")
    generate(docker, "second")
    docker.count_spin.setValue(3)
    generate(docker, "variations")
    docker.show_result(docker.index + 1)
    docker.show_result(docker.index + 1)
    report["variations"]["counter"] = docker.counter.text()
    if config.get("screenshot"):
        docker.grab().save(config["screenshot"])
        window.qwindow().grab().save(os.path.join(out, "window.png"))

    selected = doc.selection().pixelData(0, 0, width, height).data()
    layer, after = apply(docker, doc)
    names = [node.name() for node in doc.rootNode().childNodes()]
    report["apply"] = dict(region_diff(before, after, width, height, rect), layer=layer.name(), layers=names,
                           layers_added=len(names) - layers_before, status=docker.status.text(),
                           selection_kept=doc.selection() is not None and
                           doc.selection().pixelData(0, 0, width, height).data() == selected,
                           **masked_layer_report(doc, layer, docker.region, selected, before, after))
    log("apply: %s" % report["apply"])

    # A feathered selection: the mask keeps its soft values, the composite its unselected pixels.
    layer.setVisible(False)  # the image as it was, below the next result
    doc.refreshProjection()
    doc.waitForDone()
    feathered = Selection()
    feathered.select(rect[0], rect[1], rect[2], rect[3], 255)
    feathered.feather(12)
    doc.setSelection(feathered)
    selected = doc.selection().pixelData(0, 0, width, height).data()
    before = doc.pixelData(0, 0, width, height).data()
    generate(docker, "feathered_generate")
    layer, after = apply(docker, doc)
    report["feathered"] = dict(masked_layer_report(doc, layer, docker.region, selected, before, after),
                               layer=layer.name(), status=docker.status.text())
    log("feathered: %s" % report["feathered"])
    doc.setSelection(selection)
    doc.setBatchmode(True)
    report["export"] = doc.exportImage(os.path.join(out, "result.png"), InfoObject())

    # Refusals and failures are shown in the docker, which stays usable.
    docker.count_spin.setValue(1)
    docker.prompt_edit.setText("x" * 5000)  # over the server's 4000 characters: 422
    generate(docker, "refused")
    docker.prompt_edit.setText("a ripe fig")
    docker.url_edit.setText("http://127.0.0.1:9")
    generate(docker, "unreachable")
    docker.url_edit.setText(config["url"])

    docker.steps_spin.setValue(400)
    start_and_wait_running(docker, "cancel")
    docker.cancel()
    wait_until(lambda: not docker.busy(), 60, "the cancel")
    report["cancel"] = {"cancelled": docker.last_summary["cancelled"], "status": docker.status.text()}
    log("cancel: %s" % report["cancel"]["status"])

    # The shell kills the server when it sees "running", and restarts it on the same port.
    start_and_wait_running(docker, "server killed")
    open(os.path.join(out, "running"), "w").close()
    wait_until(lambda: not docker.busy(), 90, "the failure of the killed server")
    report["killed"] = {"ok": docker.last_summary["ok"], "status": docker.status.text(),
                        "generate_enabled": docker.generate_button.isEnabled()}
    log("killed: %s" % report["killed"]["status"])
    wait_until(lambda: os.path.exists(os.path.join(out, "restarted")), 120, "the restarted server")
    docker.steps_spin.setValue(2)
    generate(docker, "after_restart")


def run():
    # A hang shows up as the Python stacks in stacks.txt (the shell prints them).
    stacks = open(os.path.join(out, "stacks.txt"), "w")
    faulthandler.dump_traceback_later(120, repeat=True, file=stacks)
    try:
        scenario()
        report["completed"] = True
    except Exception:
        report["completed"] = False
        report["error"] = traceback.format_exc()
    with open(os.path.join(out, "report.json.partial"), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    os.replace(os.path.join(out, "report.json.partial"), os.path.join(out, "report.json"))
    faulthandler.cancel_dump_traceback_later()
    # Unmodified documents: Krita quits without asking to save.
    for doc in Krita.instance().documents():
        doc.setModified(False)
    log("quitting")
    QTimer.singleShot(10000, end_a_stuck_quit)
    Krita.instance().action("file_quit").trigger()


def end_a_stuck_quit():
    """Krita 5.1 under Xvfb sometimes stays running after File > Quit: documents closed, main
    window hidden but still registered, event loop idle (seen with scripts that never touch
    FlashPS too). That state ends the event loop, as the quit should have; anything else (a
    dialog, say) is left for the shell to report."""
    shown = [w.metaObject().className() for w in QApplication.topLevelWidgets() if w.isVisible()]
    log("still running 10 s after File > Quit: %d documents, visible windows %s, modal %r" %
        (len(Krita.instance().documents()), shown, QApplication.activeModalWidget()))
    if not Krita.instance().documents() and not shown:
        QApplication.quit()
