// The upgrade picker: FROM and TO releases (and a device) -> what `pitfalls upgrade FROM TO`
// says, read from the JSON the build wrote for that pair (upgrades/<device>/<from>_<to>.json).
// The choice lives in the address (upgrade.html?from=2.3.1&to=2.6.0), so it can be linked to.
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("upgrade-picker");
  if (!form) return;
  const versions = JSON.parse(form.dataset.versions);
  const from = document.getElementById("upgrade-from");
  const to = document.getElementById("upgrade-to");
  const device = document.getElementById("upgrade-device");
  const result = document.getElementById("upgrade-result");
  const root = document.documentElement.dataset.content_root || "";
  const FIX = { true: "yes", false: "no", null: "not observed on every release" };

  const el = (tag, text, attrs = {}) => {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    return node;
  };
  const caseLink = (id) => el("a", id, { href: `${root}cases/${id}.html` });

  const render = (r) => {
    result.textContent = "";
    result.append(el("p", `torch ${r.from} → ${r.to} on ${r.device} (${r.releases.length} releases recorded)`,
      { class: "upgrade-head" }));
    if (!r.cases.length) {
      result.append(el("p", "No observed change in any case."));
    } else {
      const total = Object.values(r.by_kind).reduce((a, b) => a + b, 0);
      const counts = Object.entries(r.by_kind).map(([k, n]) => `${n} ${k}`).join(", ");
      result.append(el("p", `${total} change${total === 1 ? "" : "s"} in ${r.cases.length} case${r.cases.length === 1 ? "" : "s"}: ${counts}`));
      for (const kind of Object.keys(r.by_kind)) {
        result.append(el("h3", kind.replace(/-/g, " ")));
        const list = el("ul", undefined, { class: "upgrade-changes" });
        for (const c of r.cases) {
          for (const ch of c.changes) {
            if (ch.kind !== kind) continue;
            const item = el("li", undefined, { "data-case": c.case, "data-variant": ch.variant, "data-since": ch.since, "data-kind": kind });
            item.append(caseLink(c.case), ` (${ch.variant}, in ${ch.since}): `, el("code", ch.shown_before), " → ",
              el("code", ch.shown_after));
            list.append(item);
          }
        }
        result.append(list);
      }
      result.append(el("h3", "Does the fix work on every release in between?"));
      const fixes = el("ul", undefined, { class: "upgrade-fixes" });
      for (const c of r.cases) {
        const item = el("li", undefined, { "data-case": c.case });
        item.append(caseLink(c.case), `: ${FIX[String(c.portable_fix)]}`);
        fixes.append(item);
      }
      result.append(fixes);
    }
    if (r.not_observed.length) {
      result.append(el("p", "Not observed (stale or missing records): " +
        r.not_observed.map((u) => `${u.case} on ${u.releases.join("/")}`).join(", ")));
    }
  };

  // Each choice asks for its own answer; answers can come back out of order (a slow one for an
  // earlier choice after the newest), so only the newest choice's answer is shown. data-answered
  // counts the answers that came back, shown or not.
  let asked = 0, answered = 0;
  const show = async () => {
    const ticket = ++asked;
    const a = from.value, b = to.value;
    try {
      const params = new URLSearchParams(window.location.search);
      params.set("from", a);
      params.set("to", b);
      window.history.replaceState(null, "", `${window.location.pathname}?${params}${window.location.hash}`);
      if (versions.indexOf(a) >= versions.indexOf(b)) {
        result.textContent = "";
        result.append(el("p", `Choose a FROM release older than the TO release (${a} is not older than ${b}).`));
        delete result.dataset.shown;
        return;
      }
      try {
        const answer = await fetch(`${root}upgrades/${device.value}/${a}_${b}.json`);
        if (!answer.ok) throw new Error(`${answer.status} ${answer.statusText}`);
        const data = await answer.json();
        if (ticket !== asked) return;  // a newer choice was made meanwhile
        render(data);
        result.dataset.shown = `${a}_${b}`;
      } catch (err) {
        if (ticket !== asked) return;
        result.textContent = "";
        delete result.dataset.shown;
        result.append(el("p", `The data for ${a} → ${b} could not be read (${err.message}). Served pages can read it; ` +
          "a page opened from a file cannot. In a terminal: pitfalls upgrade " + `${a} ${b}`));
      }
    } finally {
      result.dataset.answered = String(++answered);
    }
  };

  const params = new URLSearchParams(window.location.search);
  for (const [select, key] of [[from, "from"], [to, "to"]]) {
    if (versions.includes(params.get(key))) select.value = params.get(key);
  }
  [from, to, device].forEach((s) => s.addEventListener("change", show));
  show();
});
