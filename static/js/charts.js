/* Draws every Plotly figure on the page and makes the pickers submit themselves.
 *
 * A chart is <div class="js-chart" data-figure="ID"> plus a json_script element with that
 * ID holding the figure built in Python, or <div class="js-chart" data-src="URL">, whose
 * figure is fetched from URL (same origin) once: a long series' figure is not embedded. Clicking a point whose customdata is a run id opens
 * /runs/<id>/. The mode bar stays on, for its "download plot as PNG" button.
 */
(function () {
  "use strict";

  var CONFIG = { responsive: true, displaylogo: false };

  function runId(point) {
    var id = point && point.customdata;
    if (Array.isArray(id)) { id = id[0]; }
    return id !== undefined && id !== null && /^\d+$/.test(String(id)) ? String(id) : null;
  }

  function draw(el) {
    if (typeof Plotly === "undefined") { return; }
    if (el.dataset.src) {
      fetch(el.dataset.src, { credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) { throw new Error("figure: HTTP " + response.status); }
          return response.json();
        })
        .then(function (fig) { plot(el, fig); })
        .catch(function (error) { el.textContent = "The chart could not be loaded (" + error.message + ")."; });
      return;
    }
    var source = document.getElementById(el.dataset.figure);
    if (!source) { return; }
    plot(el, JSON.parse(source.textContent));
  }

  function plot(el, fig) {
    Plotly.newPlot(el, fig.data || [], fig.layout || {}, CONFIG).then(function () {
      el.on("plotly_click", function (event) {
        var id = runId(event.points && event.points[0]);
        if (id) { window.location.href = "/runs/" + id + "/"; }
      });
    });
  }

  /* A picker change reloads the page with the new selection in the URL. A select with
   * data-clears="a b" drops those fields first: they depend on it (a metric of the old
   * set-up, a baseline run of the old series). */
  function autosubmit(form) {
    form.addEventListener("change", function (event) {
      var target = event.target;
      var clears = (target.dataset && target.dataset.clears) || "";
      clears.split(" ").forEach(function (name) {
        if (!name) { return; }
        form.querySelectorAll("[name='" + name + "']").forEach(function (field) {
          field.disabled = true;
        });
      });
      form.submit();
    });
  }

  document.querySelectorAll(".js-chart").forEach(draw);
  document.querySelectorAll("form.js-autosubmit").forEach(autosubmit);
})();
