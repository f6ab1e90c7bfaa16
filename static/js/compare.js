// The compare page's pickers (templates/dashboards/compare.html). Without this script the
// form still works: ticked builds and runs are submitted as repeated base=/new= values, which
// the server pools. With it: a ticked build or run adds its ids to its side's field (unticked,
// removes them), choosing a set-up lists its builds, the filter boxes hide rows, and Compare
// opens the clean permalink /compare/?base=1,2&new=3.
(function () {
  "use strict";
  var form = document.getElementById("compare-form");
  if (!form) return;
  var fields = { base: document.getElementById("side-base"), new: document.getElementById("side-new") };
  var message = document.getElementById("pick-message");

  function ids(text) {
    return text.split(",").map(function (s) { return s.trim(); })
      .filter(function (s) { return /^[0-9]+$/.test(s); });
  }
  function setIds(side, list) {
    var seen = {};
    fields[side].value = list.filter(function (id) {
      if (seen[id]) return false;
      seen[id] = true;
      return true;
    }).join(",");
  }

  // A tick adds the build's or run's ids to its side; an untick removes them. A run is on
  // one side only: ticking it on one side takes it off the other.
  form.addEventListener("change", function (event) {
    var box = event.target;
    if (!box.classList || !box.classList.contains("pick")) return;
    var side = box.dataset.side, other = side === "base" ? "new" : "base";
    var picked = ids(box.value);
    if (box.checked) {
      setIds(side, ids(fields[side].value).concat(picked));
      setIds(other, ids(fields[other].value).filter(function (id) { return picked.indexOf(id) < 0; }));
      form.querySelectorAll('input.pick[data-side="' + other + '"]').forEach(function (b) {
        if (b.checked && ids(b.value).some(function (id) { return picked.indexOf(id) >= 0; })) {
          b.checked = false;
        }
      });
    } else {
      setIds(side, ids(fields[side].value).filter(function (id) { return picked.indexOf(id) < 0; }));
    }
    say();
  });

  function say() {
    var b = ids(fields.base.value).length, n = ids(fields["new"].value).length;
    message.textContent = "Baseline: " + b + " run" + (b === 1 ? "" : "s") + "; candidate: " +
      n + " run" + (n === 1 ? "" : "s") + ". Several runs on a side are pooled.";
  }

  // Choosing a scope or a set-up lists its builds: the page again, the sides kept.
  function reopen(withSetup) {
    var query = new URLSearchParams();
    var scope = document.getElementById("pick-scope");
    var setup = document.getElementById("pick-setup");
    if (scope && scope.value) query.set("scope", scope.value);
    if (withSetup && setup && setup.value) query.set("setup", setup.value);
    location.assign(form.action.split("?")[0] + "?" + query.toString() + sides("&"));
  }
  function sides(prefix) {
    var b = ids(fields.base.value), n = ids(fields["new"].value);
    return b.length && n.length ? prefix + "base=" + b.join(",") + "&new=" + n.join(",") : "";
  }
  var scopeSelect = document.getElementById("pick-scope");
  if (scopeSelect) scopeSelect.addEventListener("change", function () { reopen(false); });
  var setupSelect = document.getElementById("pick-setup");
  if (setupSelect) setupSelect.addEventListener("change", function () { reopen(true); });
  document.querySelectorAll(".js-hide").forEach(function (el) { el.hidden = true; });

  // Compare: the permalink with each side's ids once, or a word on what is missing.
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var b = ids(fields.base.value), n = ids(fields["new"].value);
    if (!b.length || !n.length) {
      message.textContent = "Pick at least one " + (b.length ? "candidate" : "baseline") +
        " build or run.";
      message.className = "bad";
      return;
    }
    location.assign(form.action.split("?")[0] + "?base=" + b.join(",") + "&new=" + n.join(","));
  });

  // Filter boxes: rows whose text (a build, a run, a metric name) holds every word typed.
  function filter(input, rows, attribute) {
    if (!input) return;
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      document.querySelectorAll(rows).forEach(function (row) {
        var text = (row.getAttribute(attribute) || "").toLowerCase();
        row.hidden = !words.every(function (w) { return text.indexOf(w) >= 0; });
      });
    });
  }
  filter(document.getElementById("pick-filter"), "#pick-builds tbody tr, #pick-recent tbody tr", "data-text");
  filter(document.getElementById("rows-filter"), "#compare-rows tbody tr[data-metric]", "data-metric");
})();
