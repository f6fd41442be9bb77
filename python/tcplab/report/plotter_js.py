"""The JavaScript of the report's interactive plots (:mod:`tcplab.report.interactive`): a small
canvas plotter, inline once per page (about 13 KB, no dependency: the page works offline).

``tcplabPlot(element, spec)`` draws the panels of ``spec`` one under the other in ``element``,
their time axes linked: drag to pan, scroll to zoom the time axis (over a y axis: that
axis), shift-drag to zoom on a box, double-click or "reset" to return, hover to read every
visible line's value at that time, click a legend entry to hide its line, "save PNG" for an
image of the panels. ``spec``::

    {"x": {name: base64 float64 array},           # the time axes (s), shared by name
     "panels": [{"title", "ylabel", "xlabel", "height" (px), "y1" (top, or null: the data's),
                 "series": [{"kind": "step" | "band", "x": name, "y" (step) or "lo", "hi"
                             (band): base64 float64, "label", "color", "width", "alpha",
                             "dash": [on, off] or []}],
                 "hlines": [{"y", "color", "dash"}]}]}

Steps are drawn "after" (a value holds until the next time); NaN leaves a gap.
"""

from __future__ import annotations

__all__ = ["JS"]

JS = r"""
(function () {
  if (window.tcplabPlot) return;
  var M = {l: 64, r: 210, t: 24, b: 40};
  function dec(b) {
    var s = atob(b), n = s.length, u = new Uint8Array(n);
    for (var i = 0; i < n; i++) u[i] = s.charCodeAt(i);
    return new Float64Array(u.buffer);
  }
  function ticks(a, b, n) {
    if (!(b > a)) return {v: [], d: 0};
    var raw = (b - a) / Math.max(n, 1), p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    var s = (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * p, v = [];
    for (var k = Math.ceil(a / s - 1e-9); k * s <= b + s * 1e-9; k++) v.push(k * s);
    return {v: v, d: Math.max(0, -Math.floor(Math.log10(s) + 1e-9))};
  }
  function fmtv(v) {
    if (!isFinite(v)) return "–";
    var a = Math.abs(v);
    return a >= 1000 ? v.toFixed(0) : a >= 100 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
  }
  // last index i with x[i] <= t (-1 when none)
  function at(x, t) {
    var lo = 0, hi = x.length;
    while (lo < hi) { var m = (lo + hi) >> 1; if (x[m] <= t) lo = m + 1; else hi = m; }
    return lo - 1;
  }
  window.tcplabPlot = function (root, spec) {
    var xs = {}, X0 = Infinity, X1 = -Infinity;
    for (var k in spec.x) {
      var a = xs[k] = dec(spec.x[k]);
      if (a.length) { X0 = Math.min(X0, a[0]); X1 = Math.max(X1, a[a.length - 1]); }
    }
    if (!(X1 > X0)) { X0 = 0; X1 = 1; }
    var st = {x0: X0, x1: X1, hover: null};
    var bar = document.createElement("div");
    bar.style.cssText = "font-size:0.8em;color:#555;margin:0.2em 0";
    var reset = document.createElement("button"), save = document.createElement("button");
    reset.textContent = "reset"; save.textContent = "save PNG";
    bar.appendChild(reset); bar.appendChild(document.createTextNode(" ")); bar.appendChild(save);
    bar.appendChild(document.createTextNode(
      " drag: pan · scroll: zoom time (over a y axis: that axis) · shift-drag: zoom box · double-click: reset · click a legend entry: hide it"));
    root.appendChild(bar);
    var panels = spec.panels.map(function (p) {
      var c = document.createElement("canvas");
      c.style.cssText = "display:block;width:100%;touch-action:pan-y;cursor:crosshair";
      c.style.height = p.height + "px";
      root.appendChild(c);
      var ser = p.series.map(function (s) {
        var o = {s: s, x: xs[s.x], on: true};
        if (s.y) o.y = dec(s.y);
        if (s.lo) { o.lo = dec(s.lo); o.hi = dec(s.hi); }
        return o;
      });
      var top = -Infinity;
      ser.forEach(function (o) {
        [o.y, o.hi].forEach(function (a) {
          if (a) for (var i = 0; i < a.length; i++) if (a[i] > top) top = a[i];
        });
      });
      (p.hlines || []).forEach(function (h) { if (h.y > top) top = h.y; });
      if (!isFinite(top) || top <= 0) top = 1;
      var y1 = p.y1 != null ? p.y1 : top * 1.05;
      return {p: p, c: c, ser: ser, y0: 0, y1: y1, Y1: y1, box: null};
    });
    function geo(P) {
      var W = P.c.clientWidth || 600, H = P.p.height;
      return {W: W, H: H, pw: Math.max(10, W - M.l - M.r), ph: Math.max(10, H - M.t - M.b)};
    }
    function stepPath(g, x, y, i0, i1, sx, sy) {
      var down = false;
      g.beginPath();
      for (var i = i0; i <= i1; i++) {
        var v = y[i];
        if (v === v) {
          if (down) { g.lineTo(sx(x[i]), sy(y[i - 1])); g.lineTo(sx(x[i]), sy(v)); }
          else { g.moveTo(sx(x[i]), sy(v)); down = true; }
          if (i + 1 < x.length && !(y[i + 1] === y[i + 1])) { g.lineTo(sx(x[i + 1]), sy(v)); down = false; }
        } else down = false;
      }
      if (down && i1 + 1 < x.length) g.lineTo(sx(x[i1 + 1]), sy(y[i1]));
      g.stroke();
    }
    function bandPath(g, x, lo, hi, i0, i1, sx, sy) {
      var i = i0;
      while (i <= i1) {
        while (i <= i1 && !(lo[i] === lo[i] && hi[i] === hi[i])) i++;
        if (i > i1) break;
        var a = i;
        while (i <= i1 && lo[i] === lo[i] && hi[i] === hi[i]) i++;
        var b = i - 1, end = b + 1 < x.length ? x[b + 1] : x[b];
        g.beginPath();
        g.moveTo(sx(x[a]), sy(hi[a]));
        for (var j = a + 1; j <= b; j++) { g.lineTo(sx(x[j]), sy(hi[j - 1])); g.lineTo(sx(x[j]), sy(hi[j])); }
        g.lineTo(sx(end), sy(hi[b])); g.lineTo(sx(end), sy(lo[b]));
        for (j = b; j > a; j--) { g.lineTo(sx(x[j]), sy(lo[j])); g.lineTo(sx(x[j]), sy(lo[j - 1])); }
        g.lineTo(sx(x[a]), sy(lo[a]));
        g.closePath(); g.fill();
      }
    }
    function fit(g, text, w) {
      if (g.measureText(text).width <= w) return text;
      while (text.length > 1 && g.measureText(text + "…").width > w) text = text.slice(0, -1);
      return text + "…";
    }
    function draw(P) {
      var G = geo(P), dpr = window.devicePixelRatio || 1, c = P.c;
      if (c.width !== Math.round(G.W * dpr) || c.height !== Math.round(G.H * dpr)) {
        c.width = Math.round(G.W * dpr); c.height = Math.round(G.H * dpr);
      }
      var g = c.getContext("2d");
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      g.clearRect(0, 0, G.W, G.H);
      g.fillStyle = "#fff"; g.fillRect(0, 0, G.W, G.H);
      var pw = G.pw, ph = G.ph, x0 = st.x0, x1 = st.x1;
      var sx = function (t) { return M.l + (t - x0) / (x1 - x0) * pw; };
      var sy = function (v) { return M.t + ph - (v - P.y0) / (P.y1 - P.y0) * ph; };
      g.font = "bold 12px sans-serif"; g.fillStyle = "#222"; g.textAlign = "left"; g.textBaseline = "alphabetic";
      g.fillText(P.p.title, M.l, 15);
      var xt = ticks(x0, x1, pw / 90), yt = ticks(P.y0, P.y1, ph / 35);
      g.strokeStyle = "#e4e4e4"; g.lineWidth = 1; g.setLineDash([]); g.beginPath();
      xt.v.forEach(function (t) { var X = Math.round(sx(t)) + 0.5; g.moveTo(X, M.t); g.lineTo(X, M.t + ph); });
      yt.v.forEach(function (v) { var Y = Math.round(sy(v)) + 0.5; g.moveTo(M.l, Y); g.lineTo(M.l + pw, Y); });
      g.stroke();
      g.font = "11px sans-serif"; g.fillStyle = "#444";
      g.textAlign = "center"; g.textBaseline = "top";
      xt.v.forEach(function (t) { g.fillText(t.toFixed(xt.d), sx(t), M.t + ph + 4); });
      g.textAlign = "right"; g.textBaseline = "middle";
      yt.v.forEach(function (v) { g.fillText(v.toFixed(yt.d), M.l - 5, sy(v)); });
      g.textAlign = "center"; g.textBaseline = "bottom";
      g.fillText(P.p.xlabel, M.l + pw / 2, G.H - 2);
      g.save(); g.translate(13, M.t + ph / 2); g.rotate(-Math.PI / 2); g.textBaseline = "middle";
      g.fillText(P.p.ylabel, 0, 0); g.restore();
      g.save(); g.beginPath(); g.rect(M.l, M.t, pw, ph); g.clip();
      P.ser.forEach(function (o) {
        if (!o.on || !o.x.length) return;
        var s = o.s, x = o.x, i0 = Math.max(0, at(x, x0)), i1 = Math.min(x.length - 1, at(x, x1) + 1);
        g.globalAlpha = s.alpha == null ? 1 : s.alpha;
        if (s.kind === "band") { g.fillStyle = s.color; bandPath(g, x, o.lo, o.hi, i0, i1, sx, sy); }
        else {
          g.strokeStyle = s.color; g.lineWidth = s.width || 1; g.setLineDash(s.dash || []);
          stepPath(g, x, o.y, i0, i1, sx, sy);
        }
      });
      g.globalAlpha = 1;
      (P.p.hlines || []).forEach(function (h) {
        g.strokeStyle = h.color; g.lineWidth = 1; g.setLineDash(h.dash || []);
        var Y = Math.round(sy(h.y)) + 0.5; g.beginPath(); g.moveTo(M.l, Y); g.lineTo(M.l + pw, Y); g.stroke();
      });
      g.setLineDash([]);
      if (st.hover != null && st.hover >= x0 && st.hover <= x1) {
        var H = Math.round(sx(st.hover)) + 0.5;
        g.strokeStyle = "#888"; g.beginPath(); g.moveTo(H, M.t); g.lineTo(H, M.t + ph); g.stroke();
      }
      if (P.box) {
        g.fillStyle = "rgba(60,110,200,0.15)"; g.strokeStyle = "rgba(60,110,200,0.8)";
        var b = P.box; g.fillRect(b[0], b[1], b[2] - b[0], b[3] - b[1]); g.strokeRect(b[0], b[1], b[2] - b[0], b[3] - b[1]);
      }
      g.restore();
      g.strokeStyle = "#999"; g.lineWidth = 1; g.strokeRect(M.l + 0.5, M.t + 0.5, pw, ph);
      // legend (right), with the values at the hovered time
      var lx = M.l + pw + 12, ly = M.t + 4;
      g.font = "11px sans-serif"; g.textBaseline = "middle"; g.textAlign = "left"; g.fillStyle = "#444";
      if (st.hover != null) g.fillText("at " + fmtv(st.hover) + " s", lx, ly + 2);
      P.legend = [];
      P.ser.forEach(function (o, i) {
        var s = o.s, y = ly + 16 * (i + 1);
        if (y > G.H - 6) return;
        P.legend.push([y - 8, y + 8, o]);
        g.globalAlpha = o.on ? 1 : 0.3;
        if (s.kind === "band") { g.fillStyle = s.color; g.globalAlpha *= s.alpha == null ? 1 : s.alpha; g.fillRect(lx, y - 5, 18, 10); }
        else {
          g.strokeStyle = s.color; g.lineWidth = Math.max(1, s.width || 1); g.setLineDash(s.dash || []);
          g.beginPath(); g.moveTo(lx, y); g.lineTo(lx + 18, y); g.stroke(); g.setLineDash([]);
        }
        g.globalAlpha = o.on ? 1 : 0.4; g.fillStyle = "#222";
        var val = "";
        if (st.hover != null && o.on) {
          var j = at(o.x, st.hover);
          if (j >= 0) val = s.kind === "band" ? fmtv(o.lo[j]) + "–" + fmtv(o.hi[j]) : fmtv(o.y[j]);
        }
        var vw = val ? g.measureText(val).width + 6 : 0;
        g.fillText(fit(g, s.label, M.r - 36 - vw), lx + 23, y);
        if (val) { g.textAlign = "right"; g.fillText(val, G.W - 4, y); g.textAlign = "left"; }
        g.globalAlpha = 1;
      });
    }
    function drawAll() { panels.forEach(draw); }
    function clampX() {
      var w = st.x1 - st.x0, full = X1 - X0;
      if (!(w > full * 1e-9)) { var m = (st.x0 + st.x1) / 2; w = full * 1e-9; st.x0 = m - w / 2; st.x1 = m + w / 2; }
    }
    function resetAll() {
      st.x0 = X0; st.x1 = X1; panels.forEach(function (P) { P.y0 = 0; P.y1 = P.Y1; }); drawAll();
    }
    reset.onclick = resetAll;
    save.onclick = function () {
      var W = 0, H = 0;
      panels.forEach(function (P) { W = Math.max(W, P.c.width); H += P.c.height; });
      var out = document.createElement("canvas"); out.width = W; out.height = H;
      var g = out.getContext("2d"), y = 0;
      panels.forEach(function (P) { g.drawImage(P.c, 0, y); y += P.c.height; });
      var a = document.createElement("a"); a.href = out.toDataURL("image/png"); a.download = "over-time.png";
      document.body.appendChild(a); a.click(); a.remove();
    };
    panels.forEach(function (P) {
      var c = P.c, drag = null;
      function pos(e) { var r = c.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }
      function tAt(px) { var G = geo(P); return st.x0 + (px - M.l) / G.pw * (st.x1 - st.x0); }
      function inPlot(p) { var G = geo(P); return p[0] >= M.l && p[0] <= M.l + G.pw && p[1] >= M.t && p[1] <= M.t + G.ph; }
      c.addEventListener("pointerdown", function (e) {
        var p = pos(e), G = geo(P);
        if (p[0] > M.l + G.pw) {  // the legend: toggle an entry
          (P.legend || []).forEach(function (L) { if (p[1] >= L[0] && p[1] < L[1]) L[2].on = !L[2].on; });
          draw(P); return;
        }
        if (!inPlot(p)) return;
        drag = {p: p, x0: st.x0, x1: st.x1, box: e.shiftKey};
        try { c.setPointerCapture(e.pointerId); } catch (err) { /* a synthetic pointer */ }
      });
      c.addEventListener("pointermove", function (e) {
        var p = pos(e);
        if (drag && drag.box) {
          P.box = [Math.min(drag.p[0], p[0]), Math.min(drag.p[1], p[1]), Math.max(drag.p[0], p[0]), Math.max(drag.p[1], p[1])];
          draw(P); return;
        }
        if (drag) {
          var dt = (p[0] - drag.p[0]) / geo(P).pw * (drag.x1 - drag.x0);
          st.x0 = drag.x0 - dt; st.x1 = drag.x1 - dt;
        }
        st.hover = inPlot(p) ? tAt(p[0]) : null;
        drawAll();
      });
      c.addEventListener("pointerup", function (e) {
        if (drag && drag.box && P.box) {
          var b = P.box, G = geo(P);
          if (b[2] - b[0] > 3) { var a = tAt(b[0]), z = tAt(b[2]); st.x0 = a; st.x1 = z; }
          if (b[3] - b[1] > 3) {
            var f = function (py) { return P.y0 + (M.t + G.ph - py) / G.ph * (P.y1 - P.y0); };
            var top = f(b[1]), bot = f(b[3]); P.y0 = bot; P.y1 = top;
          }
          clampX();
        }
        P.box = null; drag = null; drawAll();
      });
      c.addEventListener("pointerleave", function () { if (!drag) { st.hover = null; drawAll(); } });
      c.addEventListener("dblclick", resetAll);
      c.addEventListener("wheel", function (e) {
        var p = pos(e), G = geo(P), f = Math.exp(Math.max(-5, Math.min(5, e.deltaY * 0.002)));
        if (p[0] < M.l && p[1] >= M.t && p[1] <= M.t + G.ph) {  // over the y axis: zoom it
          e.preventDefault(); P.y1 = P.y0 + (P.y1 - P.y0) * f; draw(P); return;
        }
        if (!inPlot(p)) return;
        e.preventDefault();
        var t = tAt(p[0]);
        st.x0 = t - (t - st.x0) * f; st.x1 = t + (st.x1 - t) * f; clampX(); drawAll();
      }, {passive: false});
    });
    window.addEventListener("resize", drawAll);
    drawAll();
  };
})();
"""
