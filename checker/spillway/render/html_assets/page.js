/* spillway's HTML pages (report, check, compare, matrix): written for spillway, MIT.
   Reads the command's model from #spillway-data, draws charts as inline SVG; no network. */
(function () {
  'use strict';
  // The model is gzip-compressed JSON in base64 (report/html.py: a ROCm library's
  // kernel names take megabytes as text, a twentieth of that compressed); the
  // browser's own DecompressionStream inflates it, with no network.
  var D;
  function decode(holder) {
    var bytes = Uint8Array.from(atob(holder.textContent), function (c) { return c.charCodeAt(0); });
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).text().then(JSON.parse);
  }
  function names() {
    if (!D.names) return;              // rows name their kernel by its index in D.names (column D.name_at)
    var listed = [], previous = '';   // front-coded: [code units shared with the name before, the rest]
    D.names.forEach(function (entry) { previous = previous.slice(0, entry[0]) + entry[1]; listed.push(previous); });
    D.rows.forEach(function (r) { r[D.name_at] = listed[r[D.name_at]]; });
  }
  var app = document.getElementById('app');
  var SVGNS = 'http://www.w3.org/2000/svg';
  var PAGE = 500;            // rows drawn at once; "show more" draws the next ones

  function h(tag, attrs) {
    var node = document.createElement(tag);
    setAll(node, attrs);
    for (var i = 2; i < arguments.length; i++) add(node, arguments[i]);
    return node;
  }
  function s(tag, attrs) {
    var node = document.createElementNS(SVGNS, tag);
    setAll(node, attrs);
    for (var i = 2; i < arguments.length; i++) add(node, arguments[i]);
    return node;
  }
  function setAll(node, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === 'text') node.textContent = v;
      else if (k.slice(0, 2) === 'on') node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? '' : v);
    });
  }
  function add(node, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) { kid.forEach(function (k) { add(node, k); }); return; }
    node.appendChild(typeof kid === 'object' ? kid : document.createTextNode(String(kid)));
  }
  function fmt(v) {
    if (v === null || v === undefined || v === '') return '\u2013';
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (typeof v === 'number') return v.toLocaleString('en-US');
    return String(v);
  }
  function cmp(a, b) {           // nulls last, numbers as numbers
    var an = a === null || a === undefined || a === '', bn = b === null || b === undefined || b === '';
    if (an || bn) return an === bn ? 0 : (an ? 1 : -1);
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
  }

  // -- charts -------------------------------------------------------------------------

  function barChart(title, pairs, id) {
    var W = 340, H = 180, L = 44, B = 50, T = 14;
    var max = Math.max.apply(null, pairs.map(function (p) { return p[1]; }).concat([1]));
    var bw = (W - L - 6) / Math.max(pairs.length, 1);
    var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': title});
    [0, 0.5, 1].forEach(function (f) {
      var y = T + (H - T - B) * (1 - f);
      svg.appendChild(s('line', {'class': 'gridline', x1: L, x2: W, y1: y, y2: y}));
      svg.appendChild(s('text', {x: L - 4, y: y + 4, 'text-anchor': 'end', text: fmt(Math.round(max * f))}));
    });
    pairs.forEach(function (p, i) {
      var bh = (H - T - B) * p[1] / max, x = L + i * bw + 2;
      svg.appendChild(s('rect', {'class': 'bar', x: x, y: H - B - bh, width: Math.max(bw - 4, 1), height: bh},
        s('title', {text: p[0] + ': ' + fmt(p[1])})));
      svg.appendChild(s('text', {x: x + bw / 2 - 2, y: H - B + 12, 'text-anchor': 'end',
        transform: 'rotate(-35 ' + (x + bw / 2 - 2) + ' ' + (H - B + 12) + ')', text: p[0]}));
    });
    svg.appendChild(s('line', {'class': 'axis', x1: L, x2: W, y1: H - B, y2: H - B}));
    return h('div', {'class': 'card', id: id}, h('h3', {text: title}), svg);
  }

  function wavesAt(steps, x) {
    for (var i = 0; i < steps.length; i++) if (x <= steps[i][0]) return steps[i][1];
    return steps.length ? steps[steps.length - 1][1] : 0;
  }

  // Waves against one resource: the step curve, each kernel position (marks) and the next step.
  function curveChart(title, steps, maxWaves, unit, marks, next) {
    var W = 640, H = 220, L = 40, B = 36, T = 16, R = 12;
    var merged = [];            // kernels at the same figure: one mark, their labels joined
    marks.forEach(function (m) {
      var same = merged.filter(function (o) { return o.x === m.x; })[0];
      if (same) same.label += ', ' + m.label; else merged.push({x: m.x, label: m.label});
    });
    marks = merged;
    var xmax = steps.length ? steps[steps.length - 1][0] : 1;
    marks.forEach(function (m) { if (m.x > xmax) xmax = m.x; });
    var X = function (x) { return L + (W - L - R) * x / xmax; };
    var Y = function (w) { return T + (H - T - B) * (1 - w / maxWaves); };
    var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': title});
    for (var w = 0; w <= maxWaves; w += maxWaves > 10 ? 4 : 2) {
      svg.appendChild(s('line', {'class': 'gridline', x1: L, x2: W - R, y1: Y(w), y2: Y(w)}));
      svg.appendChild(s('text', {x: L - 4, y: Y(w) + 4, 'text-anchor': 'end', text: w}));
    }
    var d = 'M' + X(0) + ' ' + Y(steps.length ? steps[0][1] : 0), prev = 0;
    steps.forEach(function (st) {
      d += ' L' + X(prev) + ' ' + Y(st[1]) + ' L' + X(st[0]) + ' ' + Y(st[1]);
      prev = st[0];
    });
    svg.appendChild(s('path', {'class': 'curve', d: d}));
    [0, 0.25, 0.5, 0.75, 1].forEach(function (f) {
      var x = Math.round(xmax * f);
      svg.appendChild(s('text', {x: X(x), y: H - B + 14, 'text-anchor': f === 1 ? 'end' : 'middle', text: fmt(x)}));
    });
    svg.appendChild(s('text', {x: (W + L) / 2, y: H - 4, 'text-anchor': 'middle', text: unit}));
    svg.appendChild(s('line', {'class': 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B}));
    svg.appendChild(s('line', {'class': 'axis', x1: L, x2: L, y1: T, y2: H - B}));
    if (next) {
      svg.appendChild(s('line', {'class': 'next', x1: X(next.x), x2: X(next.x), y1: T, y2: H - B}));
      svg.appendChild(s('text', {'class': 'next-label', x: X(next.x) + 4, y: H - B - 6, text: next.label}));
    }
    marks.sort(function (a, b) { return a.x - b.x; });
    var lastX = -1e9, lastLabelY = 0;
    marks.forEach(function (m) {
      var y = Y(wavesAt(steps, m.x));
      // Marks closer than a label's width: each label a line above the one before.
      var labelY = X(m.x) - lastX < 110 ? Math.min(lastLabelY - 13, y - 6) : y - 6;
      lastX = X(m.x);
      lastLabelY = labelY;
      svg.appendChild(s('circle', {'class': 'pos', cx: X(m.x), cy: y, r: 5},
        s('title', {text: m.label + ': ' + fmt(m.x) + ' ' + unit + ', ' + wavesAt(steps, m.x) + ' waves'})));
      svg.appendChild(s('text', {x: X(m.x) + 7, y: Math.max(labelY, 10), text: m.label}));
    });
    return h('div', {'class': 'card curve-chart'}, h('h3', {text: title}), svg);
  }

  // The curves of one kernel: positions by VGPRs and LDS; the next step where it names them.
  function curvesFor(curve, positions, next) {
    if (!curve) return h('p', {'class': 'note', text: 'No occupancy model for this target.'});
    var needs = {};
    ((next && next.needs) || []).forEach(function (n) { needs[n.resource] = n.at_most; });
    var nextV = needs.vgpr !== undefined ? {x: needs.vgpr, label: 'next: \u2264 ' + needs.vgpr + ' for ' + next.waves} : null;
    var nextL = needs.lds !== undefined ? {x: needs.lds, label: 'next: \u2264 ' + needs.lds + ' B for ' + next.waves} : null;
    var what = curve.target + ', ' + curve.model + ', wave' + curve.wavefront_size;
    return h('div', {'class': 'curves'},
      curveChart('Waves per SIMD against VGPRs (' + what + ')', curve.vgpr, curve.max_waves, 'VGPRs',
        positions.filter(function (p) { return p.vgprs !== null && p.vgprs !== undefined; })
          .map(function (p) { return {x: p.vgprs, label: p.label}; }), nextV),
      curveChart('Waves per SIMD against LDS per work-group (' + curve.max_flat_workgroup_size + ' work-items)',
        curve.lds, curve.max_waves, 'bytes of LDS',
        positions.filter(function (p) { return p.lds !== null && p.lds !== undefined; })
          .map(function (p) { return {x: p.lds, label: p.label}; }), nextL),
      h('p', {'class': 'note', text: 'Curves from spillway\u2019s occupancy model (' + curve.model + '), each ' +
        'resource alone; the kernel\u2019s own figure is the lowest over all of them.'}));
  }

  // report --pressure: the VGPRs live along the kernel's code (the most in each stretch), its loops
  // shaded, the VGPRs it was given and each occupancy step's VGPR limit in range drawn across.
  function pressureChart(isa, curve, allocated, agprs) {
    var p = isa && isa.pressure;
    if (!p || !p.vgpr_curve || !p.vgpr_curve.length || !p.code_bytes) return null;
    var W = 640, H = 240, L = 44, B = 36, T = 16, R = 96;
    var cells = p.vgpr_curve, size = p.code_bytes, n = cells.length;
    var steps = (curve && curve.vgpr) || [];
    var top = Math.max(p.vgprs.peak, allocated || 0, 1);
    var limits = steps.filter(function (st) { return st[0] <= top * 1.25; });
    limits.forEach(function (st) { if (st[0] > top) top = st[0]; });
    top = Math.ceil(top * 1.05);
    var X = function (x) { return L + (W - L - R) * x / size; };
    var Y = function (v) { return T + (H - T - B) * (1 - v / top); };
    var title = 'Live VGPRs along the code (peak ' + p.vgprs.peak + ', ' + p.status + ')';
    var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': title,
                        'class': 'pressure-chart'});
    (isa.loop_spans || []).forEach(function (span) {
      svg.appendChild(s('rect', {'class': 'loop', x: X(span[0]), y: T, width: Math.max(X(span[1]) - X(span[0]), 1),
                                 height: H - T - B}, s('title', {text: 'loop +0x' + span[0].toString(16) +
                                 ' .. +0x' + span[1].toString(16)})));
    });
    [0, 0.25, 0.5, 0.75, 1].forEach(function (f) {
      var v = Math.round(top * f);
      svg.appendChild(s('line', {'class': 'gridline', x1: L, x2: W - R, y1: Y(v), y2: Y(v)}));
      svg.appendChild(s('text', {x: L - 4, y: Y(v) + 4, 'text-anchor': 'end', text: v}));
    });
    limits.forEach(function (st) {
      svg.appendChild(s('line', {'class': 'limit', x1: L, x2: W - R, y1: Y(st[0]), y2: Y(st[0])}));
      svg.appendChild(s('text', {'class': 'limit-label', x: W - R + 4, y: Y(st[0]) + 4,
                                 text: '\u2264 ' + st[0] + ': ' + st[1] + ' waves'}));
    });
    if (allocated) {
      svg.appendChild(s('line', {'class': 'next', x1: L, x2: W - R, y1: Y(allocated), y2: Y(allocated)}));
      svg.appendChild(s('text', {'class': 'next-label', x: L + 4, y: Y(allocated) - 4,
                                 text: 'given ' + allocated + ' VGPRs' + (agprs ? ' (AGPRs included)' : '')}));
    }
    var d = '';
    cells.forEach(function (v, i) {
      var x0 = X(size * i / n), x1 = X(size * (i + 1) / n);
      d += (i ? ' L' : 'M') + x0 + ' ' + Y(v) + ' L' + x1 + ' ' + Y(v);
    });
    svg.appendChild(s('path', {'class': 'curve pressure', d: d}));
    if (p.vgprs.offset !== null) {
      svg.appendChild(s('circle', {'class': 'pos', cx: X(p.vgprs.offset), cy: Y(p.vgprs.peak), r: 5},
        s('title', {text: 'peak ' + p.vgprs.peak + ' VGPRs at +0x' + p.vgprs.offset.toString(16)})));
    }
    [0, 0.5, 1].forEach(function (f) {
      svg.appendChild(s('text', {x: X(size * f), y: H - B + 14, 'text-anchor': f === 1 ? 'end' : 'middle',
                                 text: '+0x' + Math.round(size * f).toString(16)}));
    });
    svg.appendChild(s('text', {x: (W - R + L) / 2, y: H - 4, 'text-anchor': 'middle', text: 'code offset'}));
    svg.appendChild(s('line', {'class': 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B}));
    svg.appendChild(s('line', {'class': 'axis', x1: L, x2: L, y1: T, y2: H - B}));
    var marked = scratchTicks(svg, p.scratch_offsets, size, X, H - B, 'scratch', 'scratch access');
    if (marked) {
      legend(svg, L, H - 13, 'scratch', marked + ' scratch access' + (marked === 1 ? '' : 'es'));
    }
    var held = (p.vgpr_peak_origins || []).map(function (o) {
      return o.count + ' ' + o.defined_by + (o.source ? ' (' + o.source.file + ':' + o.source.line + ')' : '');
    }).join(', ');
    var loop = p.at_vgpr_peak && p.at_vgpr_peak.loop;
    return h('div', {'class': 'card curve-chart', id: 'pressure'}, h('h3', {text: title}), svg,
      loop ? h('p', {'class': 'note peak-loop', text: 'The peak is inside ' + loopText(loop) + '.'}) : null,
      held ? h('p', {'class': 'note', text: 'At the peak: ' + held}) : null);
  }

  // The loop holding a VGPR peak (report --pressure's at_vgpr_peak.loop): by its head's line, else its offsets.
  function loopText(loop) {
    var span = '+0x' + loop.start.toString(16) + ' .. +0x' + loop.end.toString(16);
    if (!loop.head) return 'the loop ' + span;
    return 'the loop at ' + loop.head.file + ':' + loop.head.line + (loop.head.inferred ? ' (inferred)' : '') +
      ' (' + span + (loop.back_branch ? ', back branch at line ' + loop.back_branch.line : '') + ')';
  }

  // A tick on the code axis (at y ``base``) for each scratch access offset in [0, size] (report --pressure's
  // scratch_offsets, at most 1024); ``cls`` the ticks' class.  Returns how many were drawn.
  function scratchTicks(svg, offsets, size, X, base, cls, what) {
    var drawn = 0;
    (offsets || []).forEach(function (at) {
      if (at < 0 || at > size) return;
      svg.appendChild(s('line', {'class': cls, x1: X(at), x2: X(at), y1: base - 7, y2: base},
                        s('title', {text: what + ' at +0x' + at.toString(16)})));
      drawn += 1;
    });
    return drawn;
  }

  function legend(svg, x, y, cls, label) {
    var g = s('g', {'class': 'legend ' + cls + '-legend'});
    g.appendChild(s('line', {'class': cls, x1: x + 2, x2: x + 2, y1: y, y2: y + 7}));
    g.appendChild(s('text', {'class': 'limit-label', x: x + 8, y: y + 7, text: label}));
    svg.appendChild(g);
  }

  // compare --pressure: both builds' live VGPRs along their code, each over its own code's length
  // (the two codes differ: x is the fraction of the code), the old dashed under the new.
  function overlayChart(old, now) {
    if (!old || !now || !old.vgpr_curve.length || !now.vgpr_curve.length) return null;
    var W = 640, H = 220, L = 44, B = 36, T = 16, R = 12;
    var top = Math.ceil(Math.max(old.vgprs, now.vgprs, 1) * 1.1);
    var X = function (f) { return L + (W - L - R) * f; };
    var Y = function (v) { return T + (H - T - B) * (1 - v / top); };
    var title = 'Live VGPRs along the code, old and new (peak ' + old.vgprs + ' \u2192 ' + now.vgprs + ')';
    var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': title});
    [0, 0.5, 1].forEach(function (f) {
      var v = Math.round(top * f);
      svg.appendChild(s('line', {'class': 'gridline', x1: L, x2: W - R, y1: Y(v), y2: Y(v)}));
      svg.appendChild(s('text', {x: L - 4, y: Y(v) + 4, 'text-anchor': 'end', text: v}));
    });
    [[old, 'curve old-curve'], [now, 'curve new-curve']].forEach(function (side) {
      var cells = side[0].vgpr_curve, n = cells.length, d = '';
      cells.forEach(function (v, i) { d += (i ? ' L' : 'M') + X(i / n) + ' ' + Y(v) + ' L' + X((i + 1) / n) + ' ' + Y(v); });
      svg.appendChild(s('path', {'class': side[1], d: d}, s('title', {text: (side[0] === old ? 'old' : 'new') +
        ': peak ' + side[0].vgprs + ' VGPRs, ' + side[0].code_bytes + ' bytes of code'})));
    });
    svg.appendChild(s('text', {x: (W + L) / 2, y: H - 4, 'text-anchor': 'middle',
                               text: 'along the code (each build over its own length)'}));
    svg.appendChild(s('line', {'class': 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B}));
    svg.appendChild(s('line', {'class': 'axis', x1: L, x2: L, y1: T, y2: H - B}));
    // Each build's scratch accesses on the code axis, over its own code: the new above the axis, the old
    // (dashed) below it.
    var counts = [[old, 'scratch old-scratch', H - B + 8, 'old'], [now, 'scratch new-scratch', H - B, 'new']].map(
      function (side) {
        var size = side[0].code_bytes;
        return size ? scratchTicks(svg, side[0].scratch_offsets, size, function (at) { return X(at / size); },
                                   side[2], side[1], side[3] + ': scratch access') : 0;
      });
    var notes = ['old dashed, new solid'];
    if (counts[0] || counts[1]) {
      notes.push('scratch accesses ticked on the code axis (new ' + counts[1] + ' above, old ' + counts[0] +
                 ' below)');
    }
    if (now.loop) notes.push('new peak inside ' + loopText(now.loop));
    if (old.loop) notes.push('old peak inside ' + loopText(old.loop));
    return h('div', {'class': 'card curve-chart', id: 'pressure-overlay'}, h('h3', {text: title}), svg,
      h('p', {'class': 'note', text: notes.join('; ')}));
  }

  function isaBlock(isa, label) {
    if (!isa || typeof isa !== 'object') return null;
    var rows = Object.keys(isa).filter(function (k) { return k !== 'pressure'; }).map(function (k) {
      var v = isa[k];
      return h('tr', null, h('th', {text: k}),
        h('td', {'class': typeof v === 'number' ? 'num' : null,
                 text: typeof v === 'object' && v !== null ? JSON.stringify(v) : fmt(v)}));
    });
    return h('div', {'class': 'isa'}, h('h3', {text: 'Code evidence' + (label ? ' (' + label + ')' : '')}),
      h('table', {'class': 'small'}, h('tbody', null, rows)));
  }

  // -- detail panel --------------------------------------------------------------------

  var detail = h('aside', {id: 'detail', hidden: true});
  function openDetail(title, body) {
    detail.textContent = '';
    add(detail, [h('button', {'class': 'close', title: 'close', 'aria-label': 'close', onclick: closeDetail}, '\u00D7'),
                 h('div', {'class': 'kname', id: 'detail-name', text: title}), body]);
    detail.hidden = false;
    detail.scrollTop = 0;
  }
  function closeDetail() { detail.hidden = true; }
  document.addEventListener('keydown', function (e) { if (e.key === 'Escape') closeDetail(); });

  // -- the sortable, filterable table ------------------------------------------------------

  // columns: [{label, num, value(row) (sort key), text(row)?, cls(row)?, name?}]
  function Table(opts) {
    var self = this;
    this.opts = opts;
    this.sortCol = opts.sortCol === undefined ? null : opts.sortCol;
    this.sortDir = opts.sortDir || 1;
    this.limit = PAGE;
    this.filter = '';
    this.target = '';
    this.count = h('span', {id: 'count'});
    this.table = h('table', {'class': 'grid', id: 'kernels'});
    this.more = h('button', {'class': 'more', id: 'more', hidden: true,
      onclick: function () { self.limit += PAGE * 4; self.draw(); }}, 'show more');
    var targets = {};
    opts.rows.forEach(function (r) { targets[opts.target(r)] = true; });
    this.filterBox = h('input', {type: 'search', id: 'filter', placeholder: 'filter by kernel name',
      oninput: function () { self.filter = this.value.toLowerCase(); self.limit = PAGE; self.draw(); }});
    this.targetBox = h('select', {id: 'target', onchange: function () { self.target = this.value; self.draw(); }},
      h('option', {value: ''}, 'every target'),
      Object.keys(targets).sort().map(function (t) { return h('option', {value: t}, t); }));
    this.node = h('div', {'class': 'table-block'},
      h('div', {'class': 'controls'}, this.filterBox, this.targetBox, opts.controls || null, this.count),
      this.table, this.more);
  }
  Table.prototype.visible = function () {
    var o = this.opts, f = this.filter, t = this.target, extra = o.keep;
    var rows = o.rows.filter(function (r) {
      return (!f || o.name(r).toLowerCase().indexOf(f) >= 0) && (!t || o.target(r) === t) && (!extra || extra(r));
    });
    if (this.sortCol !== null) {
      var col = o.columns()[this.sortCol], dir = this.sortDir;
      rows = rows.map(function (r, i) { return [col.value(r), i, r]; });
      rows.sort(function (a, b) {
        var c = cmp(a[0], b[0]);
        if (c && a[0] !== null && a[0] !== undefined && a[0] !== '' && b[0] !== null && b[0] !== undefined && b[0] !== '') c *= dir;
        return c || a[1] - b[1];
      });
      rows = rows.map(function (x) { return x[2]; });
    }
    return rows;
  };
  Table.prototype.draw = function () {
    var self = this, o = this.opts, columns = o.columns();
    var rows = this.visible();
    this.table.textContent = '';
    var head = h('tr', null, columns.map(function (c, i) {
      var cls = [c.num ? 'num' : '', i === self.sortCol ? (self.sortDir > 0 ? 'sorted-asc' : 'sorted-desc') : '']
        .join(' ').trim();
      return h('th', {'class': cls || null, 'data-col': i, title: 'sort by ' + c.label,
        onclick: function () {
          if (self.sortCol === i) self.sortDir = -self.sortDir;
          else { self.sortCol = i; self.sortDir = c.num ? -1 : 1; }
          self.draw();
        }}, c.label);
    }));
    var body = h('tbody');
    var shown = rows.slice(0, this.limit);
    var frag = document.createDocumentFragment();
    shown.forEach(function (r) {
      var tr = document.createElement('tr');
      for (var i = 0; i < columns.length; i++) {
        var c = columns[i], td = document.createElement('td');
        var cls = (c.num ? 'num ' : '') + (c.name ? 'name ' : '') + (c.cls ? c.cls(r) || '' : '');
        if (cls.trim()) td.className = cls.trim();
        td.textContent = c.text ? c.text(r) : fmt(c.value(r));
        tr.appendChild(td);
      }
      tr.addEventListener('click', function () {
        var old = self.table.querySelector('tr.selected');
        if (old) old.classList.remove('selected');
        tr.classList.add('selected');
        o.open(r);
      });
      frag.appendChild(tr);
    });
    body.appendChild(frag);
    this.table.appendChild(h('thead', null, head));
    this.table.appendChild(body);
    this.count.textContent = fmt(rows.length) + ' ' + (o.noun || 'kernels') +
      (rows.length > shown.length ? ' (' + fmt(shown.length) + ' shown)' : '');
    this.count.setAttribute('data-count', rows.length);
    this.more.hidden = rows.length <= shown.length;
  };

  function tableDrawn() {
    if (window.performance && performance.mark) performance.mark('spillway-table-drawn');
    document.body.setAttribute('data-ready', '1');
  }

  function header(title, lines) {
    return [h('h1', {text: title}), lines.filter(Boolean).map(function (l) { return h('p', {'class': 'note', text: l}); })];
  }
  function notes() {
    return (D.notes || []).map(function (n) { return h('p', {'class': 'note page-note', text: n}); });
  }
  function countCard(pairs) {
    return h('table', {'class': 'small', id: 'counts'}, h('tbody', null, pairs.map(function (p) {
      return h('tr', null, h('th', {text: p[0]}), h('td', {'class': 'num', id: 'count-' + p[1], text: fmt(p[2])}));
    })));
  }

  // -- report ----------------------------------------------------------------------------

  function reportPage() {
    var C = {}; D.columns.forEach(function (c, i) { C[c] = i; });
    D.rows.forEach(function (r) { r[C.file] = D.files[r[C.file]]; });
    var get = function (name) { return function (r) { return r[C[name]]; }; };
    add(app, header('spillway report', ['inputs: ' + D.inputs.join(', '), 'spillway ' + D.spillway_version]));
    add(app, countCard([['kernels read', 'read', D.counts.read], [D.listed_what, 'listed', D.counts.listed]]));
    add(app, notes());
    add(app, h('h2', {text: 'Every kernel read'}));
    add(app, h('div', {'class': 'row', id: 'histograms'}, Object.keys(D.histograms).map(function (k, i) {
      return barChart(k, D.histograms[k], 'hist-' + i);
    })));
    add(app, h('h2', {text: D.listed_what === 'kernels' ? 'Kernels' : 'Kernels (' + D.listed_what + ')'}));
    var cols = [
      {label: 'kernel', value: get('kernel'), name: true},
      {label: 'target', value: get('target')},
      {label: 'VGPRs', value: get('VGPRs'), num: true},
      {label: 'AGPRs', value: get('AGPRs'), num: true},
      {label: 'SGPRs', value: get('SGPRs'), num: true},
      {label: 'spills V/S', num: true, value: function (r) { return r[C['VGPR spills']] + r[C['SGPR spills']]; },
       text: function (r) { return r[C['VGPR spills']] + '/' + r[C['SGPR spills']]; }},
      {label: 'scratch B/lane', num: true, value: get('scratch B/lane'),
       text: function (r) { return fmt(r[C['scratch B/lane']]) + (r[C['dynamic stack']] ? '+dyn' : ''); }},
      {label: 'cause', value: get('cause')},
      {label: 'LDS B', value: get('LDS B'), num: true},
      {label: 'waves/SIMD', value: get('waves/SIMD'), num: true},
      {label: 'bound', value: get('bound')},
      {label: 'next step', value: get('next step')}
    ];
    var t = new Table({rows: D.rows, columns: function () { return cols; }, name: get('kernel'), target: get('target'),
      open: function (r) {
        var figures = D.columns.slice(1, 15).map(function (c) {
          return h('tr', null, h('th', {text: c}), h('td', {text: fmt(r[C[c]])}));
        });
        openDetail(r[C.kernel], [
          h('table', {'class': 'small', id: 'detail-figures'}, h('tbody', null, figures)),
          h('h2', {text: 'Occupancy'}),
          curvesFor(D.curves[r[C.curve]], [{label: 'this kernel', vgprs: r[C.VGPRs], lds: r[C['LDS B']]}],
                    r[C.next]),
          pressureChart(r[C.isa], D.curves[r[C.curve]], r[C.VGPRs], r[C.AGPRs]),
          isaBlock(r[C.isa])]);
      }});
    add(app, t.node);
    t.draw();
  }

  // -- compare ---------------------------------------------------------------------------

  var METRICS = {vgprs: 'VGPRs', spills: 'spilled registers', scratch: 'scratch B/lane', occupancy: 'waves/SIMD',
                 sgprs: 'SGPRs', agprs: 'AGPRs', lds: 'LDS B'};
  // Is a change of this metric worse? (more waves are better, more of anything else is worse)
  function direction(metric, before, after) {
    if (before === null || before === undefined || after === null || after === undefined || before === after) return '';
    var up = after > before;
    return (metric === 'occupancy' ? !up : up) ? 'worse' : 'better';
  }
  function arrow(a, b) {
    if (a === null || a === undefined) return fmt(b);
    if (b === null || b === undefined) return fmt(a);
    return a === b ? fmt(a) : fmt(a) + ' \u2192 ' + fmt(b);
  }

  function comparePage() {
    var F = {}; D.figures.forEach(function (f, i) { F[f] = i; });
    add(app, header('spillway compare', ['new: ' + D.new.join(', '), 'old: ' + D.old.join(', '),
      'occupancy model: ' + D.occupancy_model + '; spillway ' + D.spillway_version]));
    add(app, h('p', {'class': 'sentence', id: 'sentence', text: D.sentence}));
    var sm = D.summary;
    add(app, h('div', {'class': 'row'},
      countCard([['compared (on both sides)', 'compared', sm.compared], ['worse', 'worse', sm.worse],
                 ['mixed', 'mixed', sm.mixed], ['better', 'better', sm.better], ['unchanged', 'same', sm.same],
                 ['added (only in new)', 'added', sm.added], ['removed (only in old)', 'removed', sm.removed]]),
      totalsCard()));
    add(app, notes());
    add(app, h('h2', {text: 'Top regressions and improvements per metric'}));
    add(app, h('div', {'class': 'row', id: 'top'}, Object.keys(D.top).map(function (m) {
      var part = D.top[m];
      var list = function (rows, cls) {
        if (!rows.length) return h('p', {'class': 'note', text: 'none'});
        return h('table', {'class': 'small'}, h('tbody', null, rows.map(function (r) {
          return h('tr', null, h('td', {'class': 'name', text: r[0], title: r[0]}), h('td', {text: r[1]}),
            h('td', {'class': 'num'}, h('span', {'class': cls, text: arrow(r[2], r[3])})));
        })));
      };
      return h('div', {'class': 'card'}, h('h3', {text: METRICS[m]}),
        h('div', {'class': 'note', text: 'regressions'}), list(part.worse, 'worse'),
        h('div', {'class': 'note', text: 'improvements'}), list(part.better, 'better'));
    })));
    add(app, h('h2', {text: 'Old against new'}));
    var scatterBox = h('div', {id: 'scatter'});
    var pick = h('select', {id: 'scatter-metric', onchange: function () { drawScatter(this.value); }},
      ['vgprs', 'scratch', 'spills', 'occupancy'].map(function (m) { return h('option', {value: m}, METRICS[m]); }));
    add(app, h('div', {'class': 'card'}, h('div', null, 'metric: ', pick), scatterBox,
      h('p', {'class': 'note', text: 'Kernels on both sides listed in this page (changed ones); above the diagonal: ' +
        'more in the new build.'})));
    function drawScatter(m) {
      var W = 420, H = 320, L = 50, B = 36, T = 10, R = 12, pts = [];
      D.rows.forEach(function (r) {
        if (r[F.status] === 'added' || r[F.status] === 'removed') return;
        var a = r[F['old_' + m]], b = r[F['new_' + m]];
        if (a === null || b === null) return;
        pts.push([a, b, r]);
      });
      var max = 1;
      pts.forEach(function (p) { max = Math.max(max, p[0], p[1]); });
      var X = function (v) { return L + (W - L - R) * v / max; }, Y = function (v) { return T + (H - T - B) * (1 - v / max); };
      var svg = s('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img'});
      svg.appendChild(s('line', {'class': 'diag', x1: X(0), y1: Y(0), x2: X(max), y2: Y(max)}));
      svg.appendChild(s('line', {'class': 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B}));
      svg.appendChild(s('line', {'class': 'axis', x1: L, x2: L, y1: T, y2: H - B}));
      [0, 0.5, 1].forEach(function (f) {
        var v = Math.round(max * f);
        svg.appendChild(s('text', {x: X(v), y: H - B + 14, 'text-anchor': 'middle', text: fmt(v)}));
        svg.appendChild(s('text', {x: L - 4, y: Y(v) + 4, 'text-anchor': 'end', text: fmt(v)}));
      });
      svg.appendChild(s('text', {x: (W + L) / 2, y: H - 4, 'text-anchor': 'middle', text: 'old ' + METRICS[m]}));
      svg.appendChild(s('text', {x: 12, y: (H - B) / 2, transform: 'rotate(-90 12 ' + (H - B) / 2 + ')',
        'text-anchor': 'middle', text: 'new ' + METRICS[m]}));
      pts.slice(0, 5000).forEach(function (p) {
        svg.appendChild(s('circle', {'class': p[2][F.status], cx: X(p[0]), cy: Y(p[1]), r: 3, 'fill-opacity': 0.7},
          s('title', {text: p[2][F.name] + ' (' + p[2][F.target] + '): ' + p[0] + ' \u2192 ' + p[1]})));
      });
      scatterBox.textContent = '';
      scatterBox.appendChild(svg);
    }
    drawScatter('vgprs');
    add(app, h('h2', {text: 'Kernels'}));
    var pair = function (m, label) {
      return {label: label, num: true,
        value: function (r) {
          var a = r[F['old_' + m]], b = r[F['new_' + m]];
          return a === null || b === null ? (b === null ? a : b) : b - a;
        },
        text: function (r) { return arrow(r[F['old_' + m]], r[F['new_' + m]]); },
        cls: function (r) { return direction(m, r[F['old_' + m]], r[F['new_' + m]]); }};
    };
    var cols = [{label: 'status', value: function (r) { return r[F.status]; }},
      {label: 'kernel', name: true, value: function (r) { return r[F.name]; }},
      {label: 'target', value: function (r) { return r[F.target]; }},
      pair('vgprs', 'VGPRs'), pair('spills', 'spills'), pair('scratch', 'scratch B/lane'),
      pair('occupancy', 'waves/SIMD'), {label: 'next step', value: function (r) { return r[F.next_text]; }}];
    var t = new Table({rows: D.rows, columns: function () { return cols; }, name: function (r) { return r[F.name]; },
      target: function (r) { return r[F.target]; }, open: function (r) { compareDetail(r, F); }});
    add(app, t.node);
    t.draw();
  }

  function totalsCard() {
    var T = D.totals;
    var rows = T.metrics.map(function (m) {
      return h('tr', {id: 'total-' + m.metric}, h('th', {text: m.label}),
        h('td', {'class': 'num'}, h('span', {'class': direction(m.metric, m.old, m.new), text: arrow(m.old, m.new)})),
        h('td', {'class': 'num', text: fmt(m.added)}), h('td', {'class': 'num', text: fmt(m.removed)}));
    });
    rows.push(h('tr', {id: 'total-waves'}, h('th', {text: 'kernels losing / gaining waves'}),
      h('td', {'class': 'num', text: fmt(T.losing_waves) + ' / ' + fmt(T.gaining_waves)}), h('td'), h('td')));
    return h('div', {'class': 'card', id: 'totals'}, h('h3', {text: 'Totals'}),
      h('table', {'class': 'small'}, h('thead', null, h('tr', null, h('th'),
        h('th', {'class': 'num', text: 'matched pairs, old \u2192 new'}), h('th', {'class': 'num', text: 'added'}),
        h('th', {'class': 'num', text: 'removed'}))), h('tbody', null, rows)));
  }

  function compareDetail(r, F) {
    var figures = ['vgprs', 'agprs', 'sgprs', 'vgpr_spills', 'sgpr_spills', 'scratch', 'lds', 'occupancy'];
    var rows = figures.map(function (f) {
      var a = r[F['old_' + f]], b = r[F['new_' + f]];
      return h('tr', null, h('th', {text: f}), h('td', {'class': 'num', text: fmt(a)}),
        h('td', {'class': 'num ' + direction(f === 'vgpr_spills' || f === 'sgpr_spills' ? 'spills' : f, a, b), text: fmt(b)}));
    });
    var positions = [];
    if (r[F.old_vgprs] !== null) positions.push({label: 'old', vgprs: r[F.old_vgprs], lds: r[F.old_lds]});
    if (r[F.new_vgprs] !== null) positions.push({label: 'new', vgprs: r[F.new_vgprs], lds: r[F.new_lds]});
    openDetail(r[F.name], [
      h('p', null, r[F.target] + ' \u00B7 ' + r[F.status] + (r[F.next_text] ? ' \u00B7 next step: ' + r[F.next_text] : '')),
      h('table', {'class': 'small', id: 'detail-figures'}, h('thead', null, h('tr', null, h('th'),
        h('th', {'class': 'num', text: 'old'}), h('th', {'class': 'num', text: 'new'}))), h('tbody', null, rows)),
      h('h2', {text: 'Occupancy'}), curvesFor(D.curves[r[F.curve]], positions, r[F.next]),
      overlayChart(r[F.old_isa] && r[F.old_isa].pressure, r[F.new_isa] && r[F.new_isa].pressure),
      isaBlock(r[F.old_isa], 'old'), isaBlock(r[F.new_isa], 'new')]);
  }

  // -- matrix ----------------------------------------------------------------------------

  function matrixPage() {
    var cells = D.cells, M = D.metrics;
    add(app, header('spillway matrix', ['occupancy model: ' + D.occupancy_model + '; spillway ' + D.spillway_version]));
    if (D.verdicts && D.verdicts.length) {
      add(app, h('table', {'class': 'small', id: 'verdicts'}, h('tbody', null, D.verdicts.map(function (v) {
        return h('tr', null, h('th', {text: v.cell}),
          h('td', {'class': v.verdict === 'pass' ? 'better' : v.verdict === 'fail' ? 'worse' : 'missing',
                   text: v.verdict.toUpperCase()}), h('td', {text: v.reason}));
      }))));
    }
    add(app, h('table', {'class': 'small', id: 'cells'}, h('thead', null, h('tr', null,
      ['cell', 'toolchain', 'targets built', 'kernels'].map(function (c) { return h('th', {text: c}); }))),
      h('tbody', null, cells.map(function (c) {
        return h('tr', null, h('td', {text: c.name}), h('td', {text: c.toolchain}), h('td', {text: c.targets.join(' ')}),
          h('td', {'class': 'num', text: fmt(c.kernels)}));
      }))));
    add(app, countCard([['kernels (rows)', 'rows', D.rows.length], ['rows where cells differ', 'differing',
      D.rows.filter(function (r) { return r[3]; }).length]]));
    add(app, notes());
    var ref = 0, metric = M.indexOf('vgprs');
    var refBox = h('select', {id: 'reference', onchange: function () { ref = +this.value; t.draw(); }},
      cells.map(function (c, i) { return h('option', {value: i}, c.name); }));
    var metricBox = h('select', {id: 'metric', onchange: function () { metric = +this.value; t.draw(); }},
      M.map(function (m, i) { return h('option', {value: i, selected: i === metric}, METRICS[m] || m); }));
    var differing = h('input', {type: 'checkbox', id: 'differing', onchange: function () { t.draw(); }});
    var value = function (r, c) { var v = r[4][c]; return v ? v[metric] : null; };
    var columns = function () {
      var cols = [{label: 'kernel', name: true, value: function (r) { return r[2]; }},
                  {label: 'target', value: function (r) { return r[0]; }}];
      cells.forEach(function (c, i) {
        cols.push({label: c.name + (i === ref ? ' (ref)' : ''), num: true,
          value: function (r) { return value(r, i); },
          text: function (r) { return r[4][i] ? fmt(value(r, i)) : 'not built'; },
          cls: function (r) {
            if (!r[4][i]) return 'missing';
            return i === ref ? '' : direction(M[metric], value(r, ref), value(r, i));
          }});
      });
      return cols;
    };
    var t = new Table({rows: D.rows, columns: columns, name: function (r) { return r[2]; },
      target: function (r) { return r[0]; }, keep: function (r) { return !differing.checked || r[3]; },
      controls: [h('label', null, 'reference ', refBox), h('label', null, 'figure ', metricBox),
                 h('label', null, differing, ' only differing')],
      open: function (r) { matrixDetail(r, ref); }});
    add(app, t.node);
    t.draw();
  }

  function matrixDetail(r, ref) {
    var cells = D.cells, M = D.metrics;
    var head = h('tr', null, h('th'), cells.map(function (c, i) {
      return h('th', {'class': 'num', text: c.name + (i === ref ? ' (ref)' : '')});
    }));
    var rows = M.map(function (m, mi) {
      return h('tr', null, h('th', {text: METRICS[m] || m}), cells.map(function (c, i) {
        var v = r[4][i];
        if (!v) return h('td', {'class': 'missing', text: '\u2013'});
        var base = r[4][ref];
        return h('td', {'class': 'num ' + (i !== ref && base ? direction(m, base[mi], v[mi]) : ''), text: fmt(v[mi])});
      }));
    });
    rows.push(h('tr', null, h('th', {text: 'next step'}), cells.map(function (c, i) {
      return h('td', {text: (r[5][i] && r[5][i].text) || '\u2013'});
    })));
    var positions = [], V = M.indexOf('vgprs'), L = M.indexOf('lds');
    cells.forEach(function (c, i) { if (r[4][i]) positions.push({label: c.name, vgprs: r[4][i][V], lds: r[4][i][L]}); });
    var refNext = r[5][ref] ? r[5][ref].next : null;
    openDetail(r[2], [
      h('p', null, 'target ' + r[0] + ' \u00B7 key ' + r[1]),
      h('table', {'class': 'small', id: 'detail-figures'}, h('thead', null, head), h('tbody', null, rows)),
      h('h2', {text: 'Occupancy'}),
      h('p', {'class': 'note', text: 'Each cell\u2019s position; the dashed line is the reference cell\u2019s next step.'}),
      curvesFor(D.curves[D.group_curves[r[0]]], positions, refNext),
      cells.map(function (c, i) { return r[6] && r[6][i] ? isaBlock(r[6][i], c.name) : null; })]);
  }

  // -- check -----------------------------------------------------------------------------

  function checkPage() {
    add(app, header('spillway check', ['build: ' + D.sources.join(', '), 'baseline: ' + D.baseline,
      'spillway ' + D.spillway_version]));
    add(app, h('p', {'class': 'sentence ' + (D.verdict === 'pass' ? 'pass' : 'fail'), id: 'sentence',
      text: D.sentence}));
    add(app, countCard(Object.keys(D.counts).map(function (k) { return [k.replace(/_/g, ' '), k, D.counts[k]]; })));
    add(app, notes());
    add(app, h('h2', {text: 'Findings'}));
    var F = {}; D.figures.forEach(function (f, i) { F[f] = i; });
    var cols = [{label: 'finding', value: function (r) { return r[F.kind]; },
                 cls: function (r) { return r[F.failing] ? 'worse' : ''; }},
      {label: 'kernel', name: true, value: function (r) { return r[F.name]; }},
      {label: 'target', value: function (r) { return r[F.target]; }},
      {label: 'metric', value: function (r) { return r[F.metric]; }},
      {label: 'recorded', num: true, value: function (r) { return r[F.recorded]; }},
      {label: 'now', num: true, value: function (r) { return r[F.now]; }},
      {label: 'detail', value: function (r) { return r[F.message]; }},
      {label: 'machine code', value: function (r) { return r[F.code]; }}];
    var t = new Table({rows: D.rows, columns: function () { return cols; }, name: function (r) { return r[F.name]; },
      target: function (r) { return r[F.target]; }, noun: 'findings',
      open: function (r) {
        // (the machine code's figures in a block of their own, read at the kernel's worst instance)
        openDetail(r[F.name], [h('table', {'class': 'small', id: 'detail-figures'}, h('tbody', null,
          D.figures.filter(function (f) { return f !== 'curve' && f !== 'next' && f !== 'code_figures'; })
            .map(function (f) { return h('tr', null, h('th', {text: f}), h('td', {text: fmt(r[F[f]])})); }))),
          isaBlock(r[F.code_figures], 'machine code, worst instance'),
          h('h2', {text: 'Occupancy'}), curvesFor(D.curves[r[F.curve]], [], null)]);
      }});
    add(app, t.node);
    t.draw();
  }

  decode(document.getElementById('spillway-data')).then(function (data) {
    D = data;
    names();
    app.textContent = '';
    ({report: reportPage, compare: comparePage, matrix: matrixPage, check: checkPage}[D.kind])();
    document.body.appendChild(detail);
    tableDrawn();
  }).catch(function (error) {
    app.textContent = 'spillway: this page could not read its data (' + error + ')';
    console.error(error);
  });
})();
