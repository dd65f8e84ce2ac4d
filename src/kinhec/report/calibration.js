/* The calibration page: every figure is a plotly specification embedded by kinhec.report.calibration. */
(function () {
  function draw() {
    const drawn = [];
    for (const [id, fig] of Object.entries(KINHEC.figures)) {
      const div = document.getElementById(id);
      if (div) drawn.push(plot(div, fig));
    }
    return Promise.all(drawn);
  }
  setupTabs({ calibration: draw });
})();
