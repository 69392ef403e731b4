"""Small SVG charts as text (std lib only), for tools/figures.py.

Deterministic: the same input gives the same bytes (no dates, no random ids,
fixed number formatting). Each chart has a white background, a title, axis
values and a legend, and stays a few kilobytes.
"""

PALETTE = ('#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f',
           '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#6b6ecf')
REST = '#c8c8c8'
FONT = 'font-family="Helvetica,Arial,sans-serif" font-size="11"'


def esc(s):
    return str(s).replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;').replace('"', '&quot;')


def num(v):
    """A coordinate: at most one decimal, no trailing zeros."""
    s = '%.1f' % v
    return s[:-2] if s.endswith('.0') else s


def kb(n):
    return '%.1f KB' % (n / 1024.0)


def nice_step(top, ticks=5):
    """A round tick step (1, 2 or 5 times a power of ten, in KB steps of 1024
    bytes) giving at most about `ticks` intervals up to `top` bytes."""
    raw = top / 1024.0 / ticks
    p = 1
    while p * 10 <= raw:
        p *= 10
    for m in (1, 2, 5, 10):
        if m * p >= raw:
            return m * p * 1024
    return 10 * p * 1024


def text(x, y, s, anchor=None, size=None, weight=None, fill=None):
    a = ''
    if anchor:
        a += ' text-anchor="%s"' % anchor
    if size:
        a += ' font-size="%s"' % size
    if weight:
        a += ' font-weight="%s"' % weight
    if fill:
        a += ' fill="%s"' % fill
    return '<text x="%s" y="%s"%s>%s</text>' % (num(x), num(y), a, esc(s))


def document(width, height, body, title):
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s>\n'
            '<title>%s</title>\n<rect width="100%%" height="100%%" fill="#fff"/>\n%s\n</svg>\n'
            % (width, height, width, height, FONT, esc(title), '\n'.join(body)))


def legend(items, x0, y0, width, col_width):
    """items: (label, colour, dashed); swatches in rows of as many columns
    as fit. Returns (svg lines, height used)."""
    cols = max(1, int(width // col_width))
    out = []
    for i, (label, colour, dashed) in enumerate(items):
        x = x0 + (i % cols) * col_width
        y = y0 + (i // cols) * 16
        if dashed:
            out.append('<path d="M%s %sh14" stroke="%s" stroke-width="2" stroke-dasharray="3 2"/>'
                       % (num(x), num(y - 4), colour))
        else:
            out.append('<rect x="%s" y="%s" width="10" height="10" fill="%s"/>' % (num(x), num(y - 9), colour))
        out.append(text(x + 18, y, label))
    rows = (len(items) + cols - 1) // cols
    return out, rows * 16


def stacked_hbars(title, subtitle, bars, series, notes=(), width=760, label_width=200, ref=None, rest=False):
    """Horizontal stacked bars.

    bars: (label, values) with one value per series (None or 0: no segment);
    series: names, coloured in order from PALETTE; with `rest` the last
    series is grey (the areas not named). ref: (bytes, label) drawn as a
    dashed line across the bars, its label on a legend row of its own. Each
    bar ends with its sum."""
    top = max([sum(v or 0 for v in vals) for _, vals in bars] + [ref[0] if ref else 0, 1])
    step = nice_step(top)
    ticks = int(-(-top // step))
    x0, x1 = label_width, width - 70
    scale = (x1 - x0) / float(ticks * step)
    bar_h, gap = 14, 8
    y = 44 if subtitle else 30
    body = [text(10, 18, title, size=13, weight='bold')]
    if subtitle:
        body.append(text(10, 34, subtitle, fill='#444'))
    y_top = y + 4
    colours = [PALETTE[i % len(PALETTE)] for i in range(len(series))]
    if rest:
        colours[-1] = REST
    paths = [[] for _ in series]
    for n, (label, vals) in enumerate(bars):
        by = y_top + 6 + n * (bar_h + gap)
        body.append(text(x0 - 6, by + bar_h - 3, label, anchor='end'))
        x = x0
        for i, v in enumerate(vals):
            if v:
                w = v * scale
                paths[i].append('M%s %sh%sv%dh-%sz' % (num(x), num(by), num(w), bar_h, num(w)))
                x += w
        body.append(text(x + 4, by + bar_h - 3, kb(sum(v or 0 for v in vals)), fill='#333'))
    y_axis = y_top + 6 + len(bars) * (bar_h + gap)
    grid = []
    for t in range(ticks + 1):
        gx = x0 + t * step * scale
        grid.append('M%s %sV%s' % (num(gx), num(y_top), num(y_axis)))
        body.append(text(gx, y_axis + 13, '%d' % (t * step // 1024), anchor='middle', fill='#444'))
    body.insert(1, '<path d="%s" stroke="#e4e4e4"/>' % ''.join(grid))
    body.append(text(x0 - 14, y_axis + 13, 'KB', anchor='end', fill='#444'))
    for i, p in enumerate(paths):
        if p:
            body.append('<path fill="%s" d="%s"/>' % (colours[i], ''.join(p)))
    if ref:
        rx = x0 + ref[0] * scale
        body.append('<path d="M%s %sV%s" stroke="#000" stroke-dasharray="4 3"/>' % (num(rx), num(y_top), num(y_axis)))
    y = y_axis + 32
    lines, h = legend([(s, colours[i], False) for i, s in enumerate(series)], 10, y, width - 20, 250)
    body += lines
    y += h
    if ref:
        lines, h = legend([(ref[1], '#000', True)], 10, y, width - 20, width - 20)
        body += lines
        y += h
    y += 4
    for note in notes:
        body.append(text(10, y, note, fill='#444', size=10))
        y += 13
    return document(width, int(y), body, title)


def points(title, subtitle, categories, series, absent=(), notes=(), width=680):
    """Samples joined by lines over named steps.

    categories: (line1, line2) labels of the x positions; series: (name,
    colour, values) with None where nothing was sampled (the line skips
    it); absent: names of series with no data, listed in the legend as such.
    Values are labelled in KB; equal values at one position are labelled
    once."""
    vals = [v for _, _, vs in series for v in vs if v is not None]
    top = max(vals + [1])
    step = nice_step(top, 5)
    ticks = int(-(-top // step)) + (1 if top % step == 0 else 0)
    x0, x1 = 56, width - 20
    y_top = 64 if subtitle else 44
    plot_h = 200
    y_axis = y_top + plot_h
    yscale = plot_h / float(ticks * step)
    dx = (x1 - x0) / float(len(categories))
    body = [text(10, 18, title, size=13, weight='bold')]
    if subtitle:
        body.append(text(10, 34, subtitle, fill='#444'))
    grid = []
    for t in range(ticks + 1):
        gy = y_axis - t * step * yscale
        grid.append('M%s %sH%s' % (num(x0), num(gy), num(x1)))
        body.append(text(x0 - 6, gy + 4, '%d' % (t * step // 1024), anchor='end', fill='#444'))
    body.insert(1, '<path d="%s" stroke="#e4e4e4"/>' % ''.join(grid))
    body.append(text(x0 - 6, y_top - 12, 'KB', anchor='end', fill='#444'))

    def px(i):
        return x0 + dx * (i + 0.5)

    for i, (l1, l2) in enumerate(categories):
        body.append(text(px(i), y_axis + 14, l1, anchor='middle'))
        if l2:
            body.append(text(px(i), y_axis + 27, l2, anchor='middle', fill='#666'))
    # Where each value's label goes: of several values at one step the
    # highest above, the others below; a lone value above unless it is
    # below its neighbours (a valley, where the lines rise on both sides).
    place = {}
    for i in range(len(categories)):
        here = sorted(set(vs[i] for _, _, vs in series if vs[i] is not None))
        for v in here:
            if len(here) > 1:
                place[(i, v)] = v == here[-1]
            else:
                near = [vs[j] for _, _, vs in series if vs[i] == v
                        for j in (i - 1, i + 1) if 0 <= j < len(vs) and vs[j] is not None]
                place[(i, v)] = not near or not all(n > v for n in near)
    labelled = {}
    for k, (name, colour, vs) in enumerate(series):
        segs, pen = [], False
        for i, v in enumerate(vs):
            if v is None:
                pen = False
                continue
            segs.append('%s%s %s' % ('L' if pen else 'M', num(px(i)), num(y_axis - v * yscale)))
            pen = True
        body.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"/>' % (''.join(segs), colour))
        for i, v in enumerate(vs):
            if v is None:
                continue
            cy = y_axis - v * yscale
            body.append('<circle cx="%s" cy="%s" r="3" fill="%s"/>' % (num(px(i)), num(cy), colour))
            if v in labelled.setdefault(i, set()):
                continue
            labelled[i].add(v)
            # On a rising line the label moves to the side the line is not:
            # above and to the left, or below and to the right.
            prev = vs[i - 1] if i > 0 else None
            nxt = vs[i + 1] if i + 1 < len(vs) else None
            rising = prev is not None and nxt is not None and prev < v < nxt
            above = place[(i, v)]
            lx, anchor = px(i), 'middle'
            if rising:
                lx, anchor = (px(i) - 4, 'end') if above else (px(i) + 4, 'start')
            body.append(text(lx, cy - 7 if above else cy + 15, '%.1f' % (v / 1024.0),
                             anchor=anchor, size=10, fill=colour))
    y = y_axis + 48
    items = [(name, colour, False) for name, colour, _ in series] + [(a, '#999', True) for a in absent]
    lines, h = legend(items, 10, y, width - 20, (width - 20) // 2)
    body += lines
    y += h + 4
    for note in notes:
        body.append(text(10, y, note, fill='#444', size=10))
        y += 13
    return document(width, int(y), body, title)


def over_time(title, subtitle, panels, x_max, x_label='minutes', marks=(), notes=(), width=720):
    """Lines over time, in panels stacked above each other on one time axis.

    panels: (panel title, series, refs), with series (name, colour, points)
    where points are (x, bytes) sorted by x (bytes None: the line breaks,
    nothing was sampled there), and refs (bytes, x from, x to,
    label) horizontal dashed lines (a bound). The y axis of each panel runs
    from a round value below its lowest point to one above its highest
    (labelled in KB; not from zero when the values are far from it). marks:
    (x, label) vertical dashed lines across every panel (the warm-up's
    end). x values in x_label's unit, from 0 to x_max."""
    x0, x1 = 64, width - 20
    xscale = (x1 - x0) / float(x_max or 1)
    body = [text(10, 18, title, size=13, weight='bold')]
    if subtitle:
        body.append(text(10, 34, subtitle, fill='#444'))
    y = 56 if subtitle else 36
    plot_h = 150
    legend_items = []
    tops = []
    for ptitle, series, refs in panels:
        vals = [v for _, _, pts in series for _, v in pts if v is not None] + [r[0] for r in refs]
        lo, hi = (min(vals), max(vals)) if vals else (0, 1024)
        step = nice_step(max(hi - lo, 512), 4)
        floor = (lo // step) * step
        if floor < 2 * step:
            floor = 0
        ceil = -(-hi // step) * step
        if ceil <= hi:
            ceil += step
        yscale = plot_h / float(ceil - floor)
        body.append(text(x0, y, ptitle, weight='bold'))
        top = y + 8
        bottom = top + plot_h
        tops.append((top, bottom))
        grid = []
        t = floor
        while t <= ceil:
            gy = bottom - (t - floor) * yscale
            grid.append('M%s %sH%s' % (num(x0), num(gy), num(x1)))
            label = ('%.1f' % (t / 1024.0)) if step % 1024 else '%d' % (t // 1024)
            body.append(text(x0 - 6, gy + 4, label, anchor='end', fill='#444'))
            t += step
        body.append('<path d="%s" stroke="#e4e4e4"/>' % ''.join(grid))
        body.append(text(x0 - 6, top - 10, 'KB', anchor='end', fill='#444'))
        for value, xa, xb, label in refs:
            ry = bottom - (value - floor) * yscale
            body.append('<path d="M%s %sH%s" stroke="#000" stroke-dasharray="4 3"/>'
                        % (num(x0 + xa * xscale), num(ry), num(x0 + xb * xscale)))
            body.append(text(x0 + xb * xscale - 2, ry - 4, label, anchor='end', size=10))
        for name, colour, pts in series:
            if not pts:
                legend_items.append((name + ' (not sampled)', '#999', True))
                continue
            d, pen = '', False
            for px, v in pts:
                if v is None:
                    pen = False
                    continue
                d += '%s%s %s' % ('L' if pen else 'M', num(x0 + px * xscale), num(bottom - (v - floor) * yscale))
                pen = True
            body.append('<path d="%s" fill="none" stroke="%s" stroke-width="1.5"/>' % (d, colour))
            legend_items.append((name, colour, False))
        y = bottom + 30
    # The time axis, under the last panel.
    last_bottom = tops[-1][1] if tops else y
    tstep = 1
    while x_max / tstep > 10:
        tstep = {1: 2, 2: 5, 5: 10}.get(tstep, tstep * 2)
    t = 0
    while t <= x_max + 1e-9:
        gx = x0 + t * xscale
        body.append(text(gx, last_bottom + 14, '%g' % t, anchor='middle', fill='#444'))
        t += tstep
    body.append(text(x1, last_bottom + 28, x_label, anchor='end', fill='#444'))
    for mx, label in marks:
        gx = x0 + mx * xscale
        body.append('<path d="M%s %sV%s" stroke="#888" stroke-dasharray="2 3"/>'
                    % (num(gx), num(tops[0][0] if tops else 0), num(last_bottom)))
        body.append(text(gx + 3, last_bottom - 4, label, size=10, fill='#666'))
    y = last_bottom + 48
    lines, h = legend(legend_items, 10, y, width - 20, (width - 20) // 3)
    body += lines
    y += h + 4
    for note in notes:
        body.append(text(10, y, note, fill='#444', size=10))
        y += 13
    return document(width, int(y), body, title)
