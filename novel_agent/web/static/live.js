// The live page: Server-Sent Events from /p/NAME/events put each landed tick, each
// log line and the daemon's state on the page as they come, without a reload.
//
// A browser opens at most six connections to one server, and a stream holds one as long
// as it is open: six Live tabs would leave none for a seventh, nor for any other page.
// So a tab holds its stream only while it is seen: hidden, it closes it; seen again, it
// takes the live parts of the page as the server has them now, then opens a stream from
// there. A stream that breaks (the server restarted) is picked up the same way.
(function () {
  var source = null;

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

  function open() {
    var live = document.getElementById("live");
    if (!live || !window.EventSource || source || document.hidden) return;
    source = new EventSource(live.dataset.events);
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
    source.onerror = function () {      // not the stream's own retry: it would send again
      close();                          // what the page has since it was made
      setTimeout(refresh, 1000);
    };
  }

  function close() {
    if (source) source.close();
    source = null;
  }

  // The page's live parts (state, progress, ticks, log, and where its stream starts) as
  // the server has them now; then the stream. Tried again in 2 s when the server is away.
  function refresh() {
    if (document.hidden || source) return;
    fetch(location.href, {credentials: "same-origin"}).then(function (answer) {
      if (!answer.ok) throw new Error(answer.status);
      return answer.text();
    }).then(function (text) {
      var fresh = new DOMParser().parseFromString(text, "text/html");
      ["state", "progress", "live"].forEach(function (id) {
        var now = fresh.getElementById(id), old = document.getElementById(id);
        if (now && old) old.replaceWith(document.adoptNode(now));
      });
      open();
    }).catch(function () { setTimeout(refresh, 2000); });
  }

  document.addEventListener("visibilitychange", function () {
    if (document.hidden) close();
    else refresh();
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", open);
  else open();
})();
