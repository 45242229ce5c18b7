// The console's one script. Pages work without it; with it, the part of a
// page marked data-topic refreshes when the server says that topic changed
// (an EventSource on "events?topic=..."): it fetches the page's live
// fragment again, HTML the server rendered and escaped. Nothing here turns
// data into markup.
"use strict";
(function () {
  var live = document.getElementById("live");
  if (!live || !live.dataset.topic || !window.EventSource) {
    return;
  }
  var topic = live.dataset.topic;
  var fetching = false;
  var again = false;
  function fragmentURL() {
    var u = new URL(window.location.href);
    u.searchParams.set("fragment", "1");
    return u.toString();
  }
  function refresh() {
    if (fetching) {
      again = true;
      return;
    }
    fetching = true;
    fetch(fragmentURL(), { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) {
        if (r.redirected || r.status === 401) {
          window.location.reload(); // signed out: the page load goes to sign in
          return null;
        }
        return r.ok ? r.text() : null;
      })
      .then(function (html) {
        if (html !== null && html !== undefined) {
          live.innerHTML = html;
        }
      })
      .catch(function () {})
      .then(function () {
        fetching = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  }
  var es = new EventSource("events?topic=" + encodeURIComponent(topic));
  es.addEventListener("change", refresh);
  es.addEventListener("open", function () {
    document.body.dataset.live = "on";
  });
})();
