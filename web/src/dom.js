// Building DOM nodes: text goes in as text nodes only (names come from the wire: job, host, kernel
// names are untrusted), never as HTML; the dashboard never uses innerHTML.

// h('a', {href: '#/x', class: 'c', onclick: f}, 'text', child...) -> the element.
export function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
        if (v === null || v === undefined || v === false) continue;
        if (k === 'class') el.className = v;
        else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
        else if (k === 'style') throw new Error('inline styles are refused by the CSP; use a class');
        else el.setAttribute(k, v === true ? '' : String(v));
    }
    append(el, children);
    return el;
}

function append(el, children) {
    for (const c of children.flat(Infinity)) {
        if (c === null || c === undefined || c === false) continue;
        el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
}

// Replaces el's content with children.
export function fill(el, ...children) {
    el.replaceChildren();
    append(el, children);
    return el;
}

// A table from column titles and rows of cells (text or nodes).
export function table(caption, titles, rows, props) {
    return h('table', props,
        caption ? h('caption', null, caption) : null,
        h('thead', null, h('tr', null, titles.map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', null, rows.map((r) => h('tr', null, r.map((c) => h('td', null, c))))));
}
