// trainsim-gui: the timeline viewer. `trainsim-gui [RESULT.json ...]` opens
// windows; `--render RESULT.json --out timeline.png [--size WxH]` (with
// `--compare B.json` for a comparison) paints without a window, for reports
// and CI.
#include <QApplication>
#include <QCommandLineParser>
#include <QGuiApplication>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "model/timeline_reader.h"
#include "model/corpus_points.h"
#include "model/timeline_reader.h"
#include "view/corpus_plot.h"
#include "view/plan_plot.h"
#include "view/headless_render.h"
#include "view/main_window.h"

namespace {

using namespace trainsim::gui;

bool wants_render(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--render") == 0) return true;
  return false;
}

int render(const QCommandLineParser& args) {
  const QString out = args.value(QStringLiteral("out"));
  if (out.isEmpty()) {
    std::fprintf(stderr, "error: --render needs --out FILE.png\n");
    return 2;
  }
  RenderOptions o;
  const QStringList size = args.value(QStringLiteral("size")).split(QLatin1Char('x'));
  bool ok_w = false, ok_h = false;
  if (size.size() == 2) o.size = QSize(size[0].toInt(&ok_w), size[1].toInt(&ok_h));
  if (!ok_w || !ok_h || o.size.width() < 300 || o.size.height() < 150) {
    std::fprintf(stderr, "error: --size: expected WxH of at least 300x150, e.g. 1600x900\n");
    return 2;
  }
  o.critical_path = !args.isSet(QStringLiteral("no-critical-path"));
  try {
    // A corpus report (trainsim validate --corpus --out DIR: DIR/corpus.json) is a plot.
    const std::string path = args.value(QStringLiteral("render")).toStdString();
    if (const std::string text = read_text_file(path); is_corpus_report(text)) {
      if (!render_corpus_plot(parse_corpus_report_text(text, path), o.size).save(out)) {
        std::fprintf(stderr, "error: %s: cannot write the image\n", qPrintable(out));
        return 1;
      }
      return 0;
    }
    // A plan (trainsim plan --out PLAN.json) is its time-to-train against cost picture.
    if (const std::string text = read_text_file(path); is_plan(text)) {
      if (!render_plan_plot(parse_plan_text(text, path), o.size).save(out)) {
        std::fprintf(stderr, "error: %s: cannot write the image\n", qPrintable(out));
        return 1;
      }
      return 0;
    }
    const Run a = load_run(path);
    QImage image;
    if (args.isSet(QStringLiteral("compare")))
      image = render_comparison(a, load_run(args.value(QStringLiteral("compare")).toStdString()), o);
    else
      image = render_run(a, o);
    if (!image.save(out)) {
      std::fprintf(stderr, "error: %s: cannot write the image\n", qPrintable(out));
      return 1;
    }
  } catch (const ReadError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}

// Whether a window can open: a display server, or a Qt platform the user chose.
bool has_display() {
  return !qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
         !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

void add_options(QCommandLineParser& args) {
  args.setApplicationDescription(QStringLiteral("trainsim-gui: timelines, summaries and comparisons of trainsim runs"));
  args.addHelpOption();
  args.addVersionOption();
  args.addPositionalArgument(QStringLiteral("files"), QStringLiteral("RESULT.json or timeline files to open"),
                             QStringLiteral("[RESULT.json ...]"));
  args.addOption({QStringLiteral("render"), QStringLiteral("Paint RESULT without a window"), QStringLiteral("RESULT.json")});
  args.addOption({QStringLiteral("out"), QStringLiteral("PNG file to write with --render"), QStringLiteral("FILE.png")});
  args.addOption({QStringLiteral("size"), QStringLiteral("Image size for --render"), QStringLiteral("WxH"),
                  QStringLiteral("1600x900")});
  args.addOption({QStringLiteral("compare"), QStringLiteral("With --render: compare RESULT (A) with this run (B); "
                                                            "without: open a comparison of the first file with this"),
                  QStringLiteral("B.json")});
  args.addOption({QStringLiteral("simulate"), QStringLiteral("Simulate this scenario and open its result"),
                  QStringLiteral("SCENARIO.json")});
  args.addOption({QStringLiteral("screenshot"), QStringLiteral("Open the files, save a picture of the window there and quit"),
                  QStringLiteral("FILE.png")});
  args.addOption({QStringLiteral("no-critical-path"), QStringLiteral("With --render: do not outline the critical path")});
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication::setApplicationName(QStringLiteral("trainsim-gui"));
  QCoreApplication::setApplicationVersion(QStringLiteral("0.1.0"));
  // The command line first, before any Qt platform starts: --help, --version and a
  // bad argument need no display (issue 29).
  QCommandLineParser args;
  add_options(args);
  QStringList arguments;
  for (int i = 0; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
  // Without an application object Qt does not know the program's name yet.
  const QString usage = args.helpText().replace(QStringLiteral("<executable_name>"), QStringLiteral("trainsim-gui"));
  if (!args.parse(arguments)) {
    std::fprintf(stderr, "error: %s\n\n%s", qPrintable(args.errorText()), qPrintable(usage));
    return 2;
  }
  if (args.isSet(QStringLiteral("help")) || args.isSet(QStringLiteral("help-all"))) {
    std::printf("%s", qPrintable(usage));
    return 0;
  }
  if (args.isSet(QStringLiteral("version"))) {
    std::printf("trainsim-gui 0.1.0\n");
    return 0;
  }
  const bool headless = wants_render(argc, argv);
  if (!headless && !has_display()) {
    std::fprintf(stderr,
                 "error: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset); draw a result "
                 "without one with --render RESULT.json --out FILE.png, or set QT_QPA_PLATFORM=offscreen\n");
    return 1;
  }
  // Rendering needs no display: use the offscreen platform unless one is chosen.
  if (headless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  std::unique_ptr<QGuiApplication> app;
  if (headless)
    app = std::make_unique<QGuiApplication>(argc, argv);
  else
    app = std::make_unique<QApplication>(argc, argv);
  args.process(*app);

  if (headless) return render(args);

  MainWindow window;
  for (const QString& f : args.positionalArguments()) window.open_path(f);
  if (args.isSet(QStringLiteral("compare")) && !args.positionalArguments().isEmpty() &&
      window.open_path(args.value(QStringLiteral("compare"))))
    window.compare(0, static_cast<int>(args.positionalArguments().size()));
  if (args.isSet(QStringLiteral("simulate"))) window.simulate(args.value(QStringLiteral("simulate")));
  if (args.isSet(QStringLiteral("screenshot"))) {
    // For the docs: the window as users see it, at a fixed size.
    window.resize(1600, 900);
    window.show();
    QCoreApplication::processEvents();
    const QString file = args.value(QStringLiteral("screenshot"));
    if (!window.grab().save(file)) {
      std::fprintf(stderr, "error: %s: cannot write the image\n", qPrintable(file));
      return 1;
    }
    return 0;
  }
  window.show();
  return app->exec();
}
