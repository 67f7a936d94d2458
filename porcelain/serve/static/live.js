// jp serve: a page that follows its conversation (or the list) as it grows.
// Same origin only (the CSP allows no other); what arrives is HTML jp escaped,
// parsed inert (DOMParser runs no script) and moved in by element.
(function () {
  "use strict";
  var root = document.querySelector("[data-live]");
  if (!root || !window.fetch || !window.DOMParser) {
    return;
  }
  var url = root.getAttribute("data-live");
  var quiet = 2000; // ms between two checks while nothing changes
  var wait = quiet;

  function apply(html) {
    var found = new DOMParser().parseFromString(html, "text/html").body;
    if (root.getAttribute("data-live-mode") === "replace") {
      root.replaceChildren.apply(root, Array.prototype.slice.call(found.childNodes));
      return;
    }
    Array.prototype.slice.call(found.children).forEach(function (part) {
      var old = part.id ? document.getElementById(part.id) : null;
      if (old) {
        old.replaceWith(part);
      } else {
        root.appendChild(part);
      }
    });
  }

  function check() {
    fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then(function (reply) {
        if (reply.status === 204) {
          wait = quiet;
          return null;
        }
        if (reply.status !== 200) {
          wait = Math.min(wait * 2, 60000);
          return null;
        }
        if (reply.headers.get("X-Reload")) {
          window.location.reload();
          return null;
        }
        var next = reply.headers.get("X-Next");
        return reply.text().then(function (html) {
          apply(html);
          if (next && next.charAt(0) === "/") {
            url = next;
          }
          wait = quiet;
        });
      })
      .catch(function () {
        wait = Math.min(wait * 2, 60000);
      })
      .then(function () {
        window.setTimeout(check, document.hidden ? wait * 5 : wait);
      });
  }
  window.setTimeout(check, wait);
})();
