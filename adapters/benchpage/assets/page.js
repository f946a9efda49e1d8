// The bench page: one server-sent event stream (/events) carries a
// snapshot of every board, then each change. Nothing here acts on the
// bench; the page only shows.
"use strict";

const consoleLines = 200; // as the server keeps (benchpage.ConsoleLines)
const cards = new Map();  // board name -> its card's elements
let clockOffset = 0;      // server time minus this browser's, in ms

function el(card, cls) { return card.querySelector("." + cls); }

function makeCard(b) {
  const node = document.getElementById("card").content.firstElementChild.cloneNode(true);
  node.dataset.board = b.name;
  el(node, "name").textContent = b.name;
  el(node, "profile").textContent = b.profile;
  const card = { node, since: null, lastRun: null };
  el(node, "history").addEventListener("toggle", () => loadHistory(card));
  // The report sizes itself: the frame grows to it, the page scrolls.
  const frame = el(node, "report");
  frame.addEventListener("load", () => {
    // The body's height, not the document's: that is at least the frame's.
    const doc = frame.contentDocument;
    if (doc && doc.body) frame.style.height = doc.body.scrollHeight + 60 + "px";
  });
  document.getElementById("boards").appendChild(node);
  cards.set(b.name, card);
  return card;
}

function showState(b) {
  const card = cards.get(b.name) || makeCard(b);
  const n = card.node;
  const stage = el(n, "stage");
  stage.textContent = b.stage;
  stage.dataset.kind = b.kind || "";
  el(n, "step").textContent = b.step || "";
  el(n, "step").title = b.step || "";
  el(n, "clock").textContent = b.run ? "at " + b.clock : "";
  el(n, "clock").title = b.clock_check || "the clock the run asked for";
  el(n, "run").textContent = b.run || "";
  card.since = b.since ? new Date(b.since) : null;
  tick(card);
  showResult(card, b.last);
  loadHistory(card);
}

function showResult(card, r) {
  const box = el(card.node, "result");
  if (!r) {
    box.textContent = "No stored result yet.";
    delete box.dataset.status;
    return;
  }
  if (card.lastRun === r.run) return;
  card.lastRun = r.run;
  box.dataset.status = r.status;
  box.dataset.run = r.run;
  box.replaceChildren();
  const title = document.createElement("div");
  const status = document.createElement("span");
  status.className = "status" + (r.status === "ok" ? "" : " bad");
  status.textContent = r.status;
  title.append(status, "last result ");
  const id = document.createElement("code");
  id.textContent = r.run;
  title.append(id, ` · ${r.bench} at ${r.clock} · ${r.metrics} metrics`);
  if (r.took) title.append(` · ${r.took} from boot to result`);
  if (r.finished) title.append(` · stored ${new Date(r.finished).toLocaleTimeString()}`);
  box.append(title);
  if (r.reason) {
    const p = document.createElement("p");
    p.className = "reason";
    p.textContent = r.reason;
    box.append(p);
  }
  if (r.headline && r.headline.length) {
    const table = document.createElement("table");
    for (const f of r.headline) {
      const row = table.insertRow();
      const name = row.insertCell();
      name.className = "mono";
      name.textContent = f.metric;
      const val = row.insertCell();
      val.className = "val";
      val.textContent = f.value;
    }
    box.append(table);
  }
}

// loadHistory draws the board's history, once and again after each new
// result, while it is open.
function loadHistory(card) {
  const frame = el(card.node, "report");
  frame.hidden = !card.lastRun;
  el(card.node, "no-history").hidden = !!card.lastRun;
  if (!card.lastRun || !el(card.node, "history").open || card.historyOf === card.lastRun) return;
  card.historyOf = card.lastRun;
  frame.src = "history?board=" + encodeURIComponent(card.node.dataset.board) + "&after=" + card.lastRun;
}

function setConsole(card, lines) {
  const pre = el(card.node, "console");
  pre.textContent = lines.length ? lines.join("\n") + "\n" : "";
  card.consoleCount = lines.length;
  countLines(card);
  pre.scrollTop = pre.scrollHeight;
}

function addConsole(card, line) {
  const pre = el(card.node, "console");
  const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 30;
  pre.appendChild(document.createTextNode(line + "\n"));
  card.consoleCount = (card.consoleCount || 0) + 1;
  while (pre.childNodes.length > consoleLines) pre.removeChild(pre.firstChild);
  countLines(card);
  if (atEnd) pre.scrollTop = pre.scrollHeight;
}

function countLines(card) {
  const pre = el(card.node, "console");
  pre.dataset.lines = card.consoleCount || 0; // every line seen, not only those kept
  el(card.node, "console-count").textContent = `(last ${Math.min(card.consoleCount || 0, consoleLines)} lines)`;
}

function tick(card) {
  const e = el(card.node, "elapsed");
  if (!card.since) { e.textContent = ""; return; }
  const s = Math.max(0, Math.floor((Date.now() + clockOffset - card.since) / 1000));
  e.textContent = `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function setLink(state, text) {
  const link = document.getElementById("link");
  link.className = "link " + state;
  link.textContent = text;
}

function connect() {
  const events = new EventSource("events");
  events.addEventListener("snapshot", (m) => {
    const snap = JSON.parse(m.data);
    clockOffset = new Date(snap.now) - Date.now();
    for (const b of snap.boards) {
      showState(b);
      setConsole(cards.get(b.name), b.console || []);
    }
    setLink("live", "live");
  });
  events.addEventListener("board", (m) => showState(JSON.parse(m.data)));
  events.addEventListener("console", (m) => {
    const c = JSON.parse(m.data);
    const card = cards.get(c.board);
    if (card) addConsole(card, c.line);
  });
  events.onerror = () => setLink("lost", "not connected to bootbench serve; retrying…");
}

setInterval(() => cards.forEach(tick), 1000);
connect();
