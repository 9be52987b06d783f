// The live page: Server-Sent Events from /p/NAME/events put each landed tick, each
// log line and the daemon's state on the page as they come, without a reload.
(function () {
  function tickOf(item) { return Number(item.id.slice("tick-".length)); }

  // A tick as it lands, or written again (after a rewind, or an edit): in its place in the
  // list (newest first), over the one shown; an older scene than every one shown is left out.
  function showTick(html) {
    var list = document.getElementById("ticks");
    var made = document.createElement("template");
    made.innerHTML = html.trim();
    var item = made.content.firstElementChild;
    if (!item) return;
    var shown = document.getElementById(item.id);
    if (shown) {
      shown.replaceWith(item);
      return;
    }
    var next = Array.prototype.find.call(list.children, function (other) {
      return tickOf(other) < tickOf(item);
    });
    if (next) list.insertBefore(item, next);
    else if (!list.children.length) list.appendChild(item);
  }

  function start() {
    var live = document.getElementById("live");
    if (!live || !window.EventSource) return;
    var source = new EventSource(live.dataset.events);
    source.addEventListener("tick", function (e) { showTick(e.data); });
    source.addEventListener("gone", function (e) {     // a rewind took the tick away
      var item = document.getElementById("tick-" + e.data);
      if (item) item.remove();
    });
    source.addEventListener("log", function (e) {
      var log = document.getElementById("log");
      log.insertAdjacentHTML("beforeend", e.data);
      while (log.children.length > 200) log.removeChild(log.firstElementChild);
      log.scrollTop = log.scrollHeight;
    });
    source.addEventListener("progress", function (e) {   // a local model's stream
      document.getElementById("progress").innerHTML = e.data;
    });
    source.addEventListener("daemon", function (e) {
      document.getElementById("state").innerHTML = e.data;
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
