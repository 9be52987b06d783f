// The live page: Server-Sent Events from /p/NAME/events put each landed tick, each
// log line and the daemon's state on the page as they come, without a reload.
(function () {
  function start() {
    var live = document.getElementById("live");
    if (!live || !window.EventSource) return;
    var source = new EventSource(live.dataset.events);
    source.addEventListener("tick", function (e) {
      document.getElementById("ticks").insertAdjacentHTML("afterbegin", e.data);
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
