// The widget's stylesheet, inside its shadow root: the storefront's CSS cannot reach in, and `all: initial` on the
// host stops inherited fonts and colours from leaking in too. Themes are custom properties.
export const STYLES = `
:host{all:initial;display:block;max-width:30rem}
.w{--bg:#fff;--fg:#1d2129;--muted:#5b6472;--line:#d9dde3;--accent:#0b6b3a;--accent-fg:#fff;--error:#a4161a;--focus:#1a5fd0;
  box-sizing:border-box;background:var(--bg);color:var(--fg);border:1px solid var(--line);border-radius:10px;padding:14px 16px;
  font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
.w.dark{--bg:#1b1f24;--fg:#eef1f4;--muted:#a8b0bb;--line:#3a414b;--accent:#3ccf7e;--accent-fg:#0c1a12;--error:#ff8a8f;--focus:#8ab4ff}
.w *{box-sizing:border-box}
.head{display:flex;justify-content:space-between;gap:8px;align-items:baseline;margin:0 0 6px}
.brand{font-weight:600}
.amount{font-weight:600;white-space:nowrap}
.title{margin:0 0 8px;color:var(--muted)}
ol{list-style:none;display:flex;gap:8px;padding:0;margin:10px 0}
li{flex:1 1 0;min-width:0;font-size:12px;color:var(--muted);border-top:3px solid var(--line);padding:4px 2px 0 0;
  overflow-wrap:anywhere;hyphens:auto}
li.done{border-color:var(--accent);color:var(--fg)}
li[aria-current=step]{border-color:var(--accent);color:var(--fg);font-weight:600}
p{margin:6px 0}
.action{display:inline-block;margin-top:6px;padding:9px 16px;border-radius:8px;border:0;background:var(--accent);color:var(--accent-fg);
  font:inherit;font-weight:600;text-decoration:none;cursor:pointer}
.action[disabled]{opacity:.6;cursor:progress}
.action:focus-visible,a:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
a{color:var(--accent)}
.state{font-weight:600}
.badge{font-size:12px;font-weight:600;padding:1px 8px;border-radius:999px;background:#fff3bf;color:#5c4400;white-space:nowrap}
.test{font-size:12px;color:var(--muted);border-left:3px solid #e0a800;padding-left:8px}
.contract{display:inline-block;margin:6px 0 0 12px}
.error{color:var(--error)}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.note{font-size:12px;color:var(--muted)}
.w .note.error{color:var(--error)}
.w.compact{display:flex;flex-wrap:wrap;align-items:center;gap:6px 12px;padding:8px 12px}
.w.compact p{margin:0;flex:1 1 12rem}
.w.compact .note{flex-basis:100%}
.w.compact .action{margin:0}
.w.button{display:inline-block;border:0;padding:0;background:transparent}
.w.button .note{margin:4px 0 0}
`;
