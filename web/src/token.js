// The API token prompt: shown when the server answers 401 (or from the header's button); the
// token is kept in sessionStorage for this tab and sent by api.js. No login system of our own.
import { h } from './dom.js';

let pending = null;

export function askToken(reason) {
    if (pending) return pending.promise;
    let resolve;
    const promise = new Promise((r) => { resolve = r; });
    pending = { promise };
    const input = h('input', { type: 'password', id: 'token-input', autocomplete: 'off', required: true });
    const form = h('form', { class: 'token-form' },
        h('h2', null, 'API token'),
        h('p', null, reason || 'Enter the bearer token the server accepts (rankscope token file).'),
        h('label', { for: 'token-input' }, 'Token '), input,
        h('button', { type: 'submit' }, 'Use token'));
    const box = h('div', { class: 'token-dialog', role: 'dialog', 'aria-modal': 'true', 'aria-label': 'API token' }, form);
    form.addEventListener('submit', (e) => {
        e.preventDefault();
        sessionStorage.setItem('rankscope.token', input.value.trim());
        box.remove();
        pending = null;
        resolve();
    });
    document.body.append(box);
    input.focus();
    return promise;
}
