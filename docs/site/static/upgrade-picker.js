// The upgrade picker: FROM and TO releases (and a device) -> what `pitfalls upgrade FROM TO`
// says, read from the JSON the build wrote for that pair (upgrades/<device>/<from>_<to>.json),
// grouped by kind of change, each case under its title (the page's hidden #upgrade-titles list,
// which the zh edition translates like any other text). The choice lives in the address
// (upgrade.html?from=2.3.1&to=2.6.0), so it can be linked to.
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("upgrade-picker");
  if (!form) return;
  // The picker's own words, in the page's language; the data (releases, messages) is the build's.
  const WORDS = {
    en: {
      head: (a, b, d, n) => `torch ${a} → ${b} on ${d} (${n} releases recorded)`,
      none: "No observed change in any case.",
      total: (n, c) => `${n} change${n === 1 ? "" : "s"} in ${c} case${c === 1 ? "" : "s"}:`,
      fixes: "Does the fix work on every release in between?",
      fix: { true: "yes", false: "no", null: "not observed on every release" },
      since: (v) => `from ${v}`,
      sep: [": ", ", "],
      verdict: {},
      variant: { broken: "the broken code", fixed: "the fixed code", symptom: "the symptom" },
      and: " and ",
      unobserved: "Not observed (stale or missing records):",
      on: "on",
      order: (a, b) => `Choose a FROM release older than the TO release (${a} is not older than ${b}).`,
      unreadable: (a, b, e) => `The data for ${a} → ${b} could not be read (${e}). Served pages can read it; ` +
        `a page opened from a file cannot. In a terminal: pitfalls upgrade ${a} ${b}`,
      kinds: {
        "symptom-appears": "The pitfall starts to show",
        "symptom-disappears": "The pitfall stops showing",
        "starts-raising": "Now raises an error",
        "stops-raising": "No longer raises",
        "exception-type": "Raises another exception type",
        "message-reworded": "The error message is reworded",
        "warning-added": "A new warning",
        "warning-removed": "The warning is gone",
        "warning-category": "The warning's category changes",
        "warning-reworded": "The warning is reworded",
        "value-changed": "The returned value changes",
        "form-changed": "The symptom's form changes",
      },
    },
    zh: {
      head: (a, b, d, n) => `torch ${a} → ${b}，设备 ${d}（记录了 ${n} 个版本）`,
      none: "没有观察到任何案例发生变化。",
      total: (n, c) => `${c} 个案例共有 ${n} 处变化：`,
      fixes: "修复写法在中间的每个版本上都有效吗？",
      fix: { true: "有效", false: "无效", null: "并非每个版本都有观察记录" },
      since: (v) => `自 ${v} 起`,
      sep: ["：", "，"],
      // the matrix's words for a symptom's verdict, shown in place of the recorded text
      verdict: { "no symptom": "没有出现症状", "symptom seen": "出现症状" },
      variant: { broken: "错误写法", fixed: "修复写法", symptom: "症状" },
      and: "和",
      unobserved: "没有观察记录（记录过期或缺失）：",
      on: "在",
      order: (a, b) => `起始版本（FROM）必须早于目标版本（TO）（${a} 并不早于 ${b}）。`,
      unreadable: (a, b, e) => `无法读取 ${a} → ${b} 的数据（${e}）。通过服务器访问的页面可以读取，` +
        `直接从文件打开的页面不行。也可以在终端运行：pitfalls upgrade ${a} ${b}`,
      kinds: {
        "symptom-appears": "开始出现这个坑",
        "symptom-disappears": "不再出现这个坑",
        "starts-raising": "开始报错",
        "stops-raising": "不再报错",
        "exception-type": "抛出的异常类型变了",
        "message-reworded": "报错信息的措辞变了",
        "warning-added": "新增了一条警告",
        "warning-removed": "警告消失了",
        "warning-category": "警告的类别变了",
        "warning-reworded": "警告的措辞变了",
        "value-changed": "返回值变了",
        "form-changed": "症状的形式变了",
      },
    },
  };
  const words = WORDS[(document.documentElement.lang || "en").startsWith("zh") ? "zh" : "en"];
  const versions = JSON.parse(form.dataset.versions);
  const from = document.getElementById("upgrade-from");
  const to = document.getElementById("upgrade-to");
  const device = document.getElementById("upgrade-device");
  const result = document.getElementById("upgrade-result");
  const root = document.documentElement.dataset.content_root || "";
  const titles = {};
  for (const li of document.querySelectorAll("#upgrade-titles li")) titles[li.dataset.case] = li.textContent.trim();

  const el = (tag, text, attrs = {}) => {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    return node;
  };
  const caseLink = (id) => el("a", titles[id] || id, { href: `${root}cases/${id}.html`, title: id });
  const kindName = (kind) => words.kinds[kind] || kind.replace(/-/g, " ");

  const render = (r) => {
    result.textContent = "";
    result.append(el("p", words.head(r.from, r.to, r.device, r.releases.length), { class: "upgrade-head" }));
    if (!r.cases.length) {
      result.append(el("p", words.none));
    } else {
      const total = Object.values(r.by_kind).reduce((a, b) => a + b, 0);
      const summary = el("p", words.total(total, r.cases.length) + " ");
      summary.append(Object.entries(r.by_kind).map(([k, n]) => `${kindName(k)} (${n})`).join(words === WORDS.zh ? "、" : ", "));
      result.append(summary);
      for (const kind of Object.keys(r.by_kind)) {
        result.append(el("h3", kindName(kind)));
        const list = el("ul", undefined, { class: "upgrade-changes" });
        for (const c of r.cases) {
          // one line per case and change: the variants that changed the same way share it
          const same = new Map();
          for (const ch of c.changes) {
            if (ch.kind !== kind) continue;
            const key = [ch.since, ch.shown_before, ch.shown_after].join("\u0000");
            if (!same.has(key)) same.set(key, { ...ch, variants: [] });
            same.get(key).variants.push(ch.variant);
          }
          for (const ch of same.values()) {
            const item = el("li", undefined, { "data-case": c.case, "data-variant": ch.variants.join(" "), "data-since": ch.since, "data-kind": kind });
            const who = ch.variants.map((v) => words.variant[v] || v).join(words.and);
            item.append(caseLink(c.case), `${words.sep[0]}${who}${words.sep[1]}${words.since(ch.since)}`);
            const change = el("div", undefined, { class: "upgrade-change" });
            const shown = (text) => words.verdict[text] || text;
            change.append(el("code", shown(ch.shown_before)), " → ", el("code", shown(ch.shown_after)));
            item.append(change);
            list.append(item);
          }
        }
        result.append(list);
      }
      result.append(el("h3", words.fixes));
      const fixes = el("ul", undefined, { class: "upgrade-fixes" });
      for (const c of r.cases) {
        const item = el("li", undefined, { "data-case": c.case });
        item.append(caseLink(c.case), `${words.sep[0]}${words.fix[String(c.portable_fix)]}`);
        fixes.append(item);
      }
      result.append(fixes);
    }
    if (r.not_observed.length) {
      const p = el("p", words.unobserved + " ");
      r.not_observed.forEach((u, i) => {
        if (i) p.append(", ");
        p.append(caseLink(u.case), ` ${words.on} ${u.releases.join("/")}`);
      });
      result.append(p);
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
        result.append(el("p", words.order(a, b)));
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
        result.append(el("p", words.unreadable(a, b, err.message)));
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
