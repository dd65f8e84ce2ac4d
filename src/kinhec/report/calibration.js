/* The calibration page: every figure is a plotly specification embedded by kinhec.report.calibration. */
(function () {
  function draw() {
    for (const [id, fig] of Object.entries(KINHEC.figures)) {
      const div = document.getElementById(id);
      if (div) plot(div, fig);
    }
  }
  setupTabs({ calibration: draw });
})();
