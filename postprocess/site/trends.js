// mdxbench trend pages: the index of the series (trends/index.js, filtered here) and the
// chart of a series, drawn from its data (trends/<id>.js) when it is opened. Shipped with
// the site as it is: no build step, nothing fetched from the network.
var ROWS = [];
var COLORS = {p: '#1f77b4', f: '#d62728', n: '#9467bd'};
var NAMES = {p: 'passed', f: 'failed', n: 'no reference'};
var VERDICT_COLORS = {regression: '#d62728', improvement: '#2ca02c', 'no-direction': '#7f7f7f'};

function mdxbenchIndex(rows) { ROWS = rows; }

function esc(t) { var d = document.createElement('div'); d.textContent = t; return d.innerHTML; }

// a time in seconds since the epoch as Plotly's date text, in UTC
function day(s) { return new Date(s * 1000).toISOString().slice(0, 19).replace('T', ' '); }

function median(a) {
  var b = a.slice().sort(function (x, y) { return x - y; }), m = b.length >> 1;
  return b.length % 2 ? b[m] : (b[m - 1] + b[m]) / 2;
}

function vline(x, line) {
  return {type: 'line', xref: 'x', x0: x, x1: x, yref: 'paper', y0: 0, y1: 1, line: line};
}

// the Plotly figure of a series: its points by result, the median of each segment
// between change points, the reference and its band, events and change points as rules
function mdxbenchFigure(parts, x) {
  var t = [], acc = 0, i, data = [], shapes = [], notes = [], s = {v: [], r: '', job: [], nodes: []};
  // the parts (earlier runs, the latest month's), each with its first time absolute
  parts.forEach(function (p) {
    if (!p) return;
    for (acc = 0, i = 0; i < p.t.length; i++) { acc += p.t[i]; t.push(day(acc)); }
    s.v = s.v.concat(p.v); s.r += p.r; s.job = s.job.concat(p.job); s.nodes = s.nodes.concat(p.nodes);
  });
  ['p', 'f', 'n'].forEach(function (res) {
    var px = [], py = [], tx = [];
    for (var j = 0; j < t.length; j++) {
      if (s.r[j] !== res) continue;
      px.push(t[j]); py.push(s.v[j]);
      tx.push('job ' + (s.job[j] || '?') + '<br>nodes ' + (s.nodes[j] || '?'));
    }
    if (!px.length) return;
    data.push({type: 'scatter', mode: 'markers', x: px, y: py, text: tx, name: NAMES[res],
               marker: {color: COLORS[res], size: 7, symbol: res === 'f' ? 'x' : 'circle'},
               hovertemplate: '%{x|%Y-%m-%d %H:%M}<br>%{y:.4g} ' + x.unit + '<br>%{text}<extra></extra>'});
  });
  var edges = [0].concat(x.cps.map(function (c) { return c.run - 1; })).concat([t.length]);
  for (i = 0; i + 1 < edges.length; i++) {
    var a = edges[i], b = edges[i + 1], m = median(s.v.slice(a, b));
    data.push({type: 'scatter', mode: 'lines', x: [t[a], t[b - 1]], y: [m, m],
               line: {color: '#ff7f0e', width: 2}, name: 'segment median', showlegend: i === 0,
               hoverinfo: 'skip'});
  }
  if (x.ref) {
    var ref = x.ref.ref, vals = s.v.concat([ref]);
    shapes.push({type: 'line', xref: 'paper', x0: 0, x1: 1, yref: 'y', y0: ref, y1: ref,
                 line: {color: '#2ca02c', dash: 'dot'}});
    notes.push({xref: 'paper', x: 1, yref: 'y', y: ref, showarrow: false, xanchor: 'right',
                yanchor: 'bottom', text: 'reference ' + Number(ref.toPrecision(4))});
    if (x.ref.lo !== null || x.ref.hi !== null)
      shapes.push({type: 'rect', xref: 'paper', x0: 0, x1: 1, yref: 'y',
                   y0: x.ref.lo !== null ? x.ref.lo : Math.min.apply(null, vals) * 0.9,
                   y1: x.ref.hi !== null ? x.ref.hi : Math.max.apply(null, vals) * 1.1,
                   fillcolor: '#2ca02c', opacity: 0.08, line: {width: 0}});
  }
  x.events.forEach(function (e) {
    shapes.push(vline(day(e.t), {color: '#555', width: 1}));
    notes.push({x: day(e.t), y: 1, yref: 'paper', text: esc(e.name), showarrow: false,
                xanchor: 'left', font: {size: 10}});
  });
  x.cps.forEach(function (c) {
    var color = VERDICT_COLORS[c.verdict], at = t[c.run - 1];
    shapes.push(vline(at, {color: color, dash: 'dash'}));
    notes.push({x: at, y: 0, yref: 'paper', showarrow: false, xanchor: 'left',
                text: (c.effect > 0 ? '+' : '') + Math.round(c.effect * 100) + '%',
                hovertext: c.explanation ? esc(c.explanation) : undefined,
                font: {size: 10, color: color}});
  });
  var xaxis = {};
  if (t.length && t[0] === t[t.length - 1])          // one time: a day either side
    xaxis.range = [day(acc - 86400), day(acc + 86400)];
  return {data: data, layout: {
    title: {text: esc(x.title), font: {size: 13}}, height: 320,
    margin: {l: 60, r: 20, t: 40, b: 40}, xaxis: xaxis, yaxis: {title: {text: x.unit}},
    legend: {orientation: 'h', y: -0.2}, shapes: shapes, annotations: notes}};
}

// opened: when each chart was asked for; a drawn chart's div says how long it took
// (data-ms), as the index's body says when it was drawn (data-index-ms, since navigation)
var OPENED = {};
function draw(id, parts, x) {
  var div = document.getElementById('chart-' + id), fig = mdxbenchFigure(parts, x);
  if (!div) return;
  Plotly.newPlot(div, fig.data, fig.layout, {responsive: true, displaylogo: false});
  if (OPENED[id] !== undefined) div.setAttribute('data-ms', (performance.now() - OPENED[id]).toFixed(0));
}

// a series' file calls this when it has loaded: its earlier runs and what is drawn besides
// them; its latest month's runs are in the file of its bucket (x.latest), loaded once
var WAITING = {}, LATEST = {};
function mdxbenchChart(id, earlier, x) {
  if (!x.latest) return draw(id, [earlier], x);
  if (LATEST[x.latest]) return draw(id, [earlier, LATEST[x.latest][id]], x);
  var first = !Object.keys(WAITING).some(function (k) { return WAITING[k][1].latest === x.latest; });
  WAITING[id] = [earlier, x];
  if (!first) return;
  var s = document.createElement('script'); s.src = 'trends/' + x.latest; document.head.appendChild(s);
}
function mdxbenchLatest(b, points) {
  var name = 'latest-' + b + '.js';
  LATEST[name] = points;
  Object.keys(WAITING).forEach(function (id) {
    var w = WAITING[id];
    if (w[1].latest !== name) return;
    delete WAITING[id];
    draw(id, [w[0], points[id]], w[1]);
  });
}

function render() {
  var tgt = document.getElementById('f-target').value, ver = document.getElementById('f-verdict').value,
      chk = document.getElementById('f-check').value.toLowerCase(), body = document.getElementById('series'),
      shown = Number(document.body.getAttribute('data-shown')), out = [], n = 0;
  ROWS.forEach(function (r) {
    if ((tgt && r.target !== tgt) || (chk && r.check.toLowerCase().indexOf(chk) < 0)
        || (ver === 'none' && r.verdict) || (ver && ver !== 'none' && r.verdict !== ver)) return;
    n += 1;
    if (n > shown && r.id !== location.hash.slice(1)) return;
    out.push('<tr id="' + r.id + '"><td>' + esc(r.target) + '</td><td><a href="#' + r.id + '">'
      + esc(r.check) + '</a></td><td>' + esc(r.perf_var) + '</td><td>' + r.runs + '</td><td>'
      + (r.verdict ? '<span class="' + r.verdict + '">' + r.verdict + ' ' + r.effect
         + '</span> since ' + r.since : '&ndash;') + '</td><td>' + esc(r.mde) + '</td></tr>');
  });
  body.innerHTML = out.join('');
  document.body.setAttribute('data-index-ms', performance.now().toFixed(0));
  document.getElementById('shown').textContent = n > shown ?
    'the first ' + shown + ' of ' + n + ' matching series (filter to see others)' : n + ' matching series';
  open_(location.hash.slice(1));
}

function open_(id) {
  var row = document.getElementById(id);
  if (!id || !row || document.getElementById('chart-' + id)) return;
  var tr = document.createElement('tr'), td = document.createElement('td'), div = document.createElement('div');
  OPENED[id] = performance.now();
  td.colSpan = 6; div.id = 'chart-' + id; div.className = 'chart';
  td.appendChild(div); tr.appendChild(td); row.parentNode.insertBefore(tr, row.nextSibling);
  var s = document.createElement('script'); s.src = 'trends/' + id.slice(1, 3) + '/' + id + '.js';
  document.head.appendChild(s);
}

// the index page: the filters' choices, then the rows
function mdxbenchStart() {
  var targets = [];
  ROWS.forEach(function (r) { if (targets.indexOf(r.target) < 0) targets.push(r.target); });
  targets.forEach(function (t) {
    var o = document.createElement('option'); o.textContent = t; document.getElementById('f-target').appendChild(o);
  });
  ['f-target', 'f-verdict', 'f-check'].forEach(function (id) {
    document.getElementById(id).addEventListener('input', render);
  });
  window.addEventListener('hashchange', function () { open_(location.hash.slice(1)); });
  render();
}
