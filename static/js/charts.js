/* Draws every Plotly figure on the page and makes the pickers submit themselves.
 *
 * A chart is <div class="js-chart" data-figure="ID"> plus a json_script element with that
 * ID holding the figure built in Python, or <div class="js-chart" data-src="URL">, whose
 * figure is fetched from URL (same origin) once: a long series' figure is not embedded.
 *
 * Clicking a point opens its page: a customdata that is a run id opens /runs/<id>/, one that
 * is a same-site path (an alert marker's "/alerts/<id>/") opens that path. The mode bar
 * stays on, for its "download plot as PNG" button. Until a chart is drawn its box shows
 * the loading note from _chart.html (and keeps its height); a failure replaces the note.
 */
(function () {
  "use strict";

  var CONFIG = { responsive: true, displaylogo: false };

  function pointUrl(point) {
    var data = point && point.customdata;
    if (Array.isArray(data)) { data = data[0]; }
    if (data === undefined || data === null) { return null; }
    var text = String(data);
    if (/^\d+$/.test(text)) { return "/runs/" + text + "/"; }
    // A path on this site only: "/x", never "//host" or "javascript:".
    if (/^\/[^\/]/.test(text)) { return text; }
    return null;
  }

  function fetchJson(url) {
    return fetch(url, { credentials: "same-origin" }).then(function (response) {
      if (!response.ok) { throw new Error("HTTP " + response.status); }
      return response.json();
    });
  }

  function note(el, text) {
    var p = el.querySelector(".chart-loading");
    if (!p) {
      p = document.createElement("p");
      p.className = "chart-loading";
      el.appendChild(p);
    }
    p.textContent = text;
    p.classList.add("chart-failed");
    el.setAttribute("aria-busy", "false");
  }

  function draw(el) {
    if (typeof Plotly === "undefined") {
      note(el, "The chart could not be drawn: plotly.js did not load.");
      return;
    }
    var figure;
    if (el.dataset.src) {
      figure = fetchJson(el.dataset.src);
    } else {
      var source = document.getElementById(el.dataset.figure);
      if (!source) { note(el, "The chart has no figure."); return; }
      figure = Promise.resolve(JSON.parse(source.textContent));
    }
    figure
      .then(function (fig) { return plot(el, fig); })
      .catch(function (error) { note(el, "The chart could not be loaded (" + error.message + ")."); });
  }

  function plot(el, fig) {
    return Plotly.newPlot(el, fig.data || [], fig.layout || {}, CONFIG).then(function () {
      var loading = el.querySelector(".chart-loading");
      if (loading) { loading.remove(); }
      el.style.minHeight = "";
      el.setAttribute("aria-busy", "false");
      el.on("plotly_click", function (event) {
        var url = pointUrl(event.points && event.points[0]);
        if (url) { window.location.href = url; }
      });
    });
  }

  /* A picker change reloads the page with the new selection in the URL. A select with
   * data-clears="a b" drops those fields first: they depend on it (a metric of the old
   * set-up, a baseline run of the old series). */
  function autosubmit(form) {
    form.addEventListener("change", function (event) {
      var field = event.target;
      var clears = (field.dataset && field.dataset.clears) || "";
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
