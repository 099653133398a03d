// contstim browser experiment client: instructions (Golan et al. 2023, Figure S1), trials
// (Figure S2), end page.  Talks only to the JSON API of the server that serves this page.
// The participant token lives in localStorage and in the URL fragment (#token=...), so a
// reload resumes at the first unanswered trial.  The token is the only way back in: a second
// sign-up with the same platform id is refused (409) and its message shown.
"use strict";
(function () {
  var STORAGE_KEY = "contstim_token";
  var PAGES = ["loading", "instructions", "trial", "end", "problem"];
  var token = null;
  var current = null;
  var shownAt = 0;
  var busy = false;

  function $(id) { return document.getElementById(id); }

  function show(page) {
    PAGES.forEach(function (p) { $(p).hidden = (p !== page); });
    $("progress-area").hidden = (page !== "trial");
  }

  function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }

  function api(method, path, body) {
    var headers = { "Accept": "application/json" };
    if (token) { headers["Authorization"] = "Bearer " + token; }
    var init = { method: method, headers: headers, cache: "no-store", credentials: "same-origin" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(path, init).then(function (resp) {
      return resp.json().catch(function () { return null; }).then(function (data) {
        return { status: resp.status, data: data };
      });
    });
  }

  // Network failures are retried a bounded number of times; HTTP answers are returned as they are.
  async function apiRetry(method, path, body) {
    var lastError = null;
    for (var attempt = 0; attempt < 6; attempt++) {
      try { return await api(method, path, body); }
      catch (err) { lastError = err; await sleep(400 * (attempt + 1)); }
    }
    throw new Error("the server cannot be reached (" + lastError + ")");
  }

  function readToken() {
    var m = /(?:^#|&)token=([A-Za-z0-9_-]+)/.exec(location.hash);
    if (m) { return m[1]; }
    try { return localStorage.getItem(STORAGE_KEY); } catch (e) { return null; }
  }

  function saveToken(t) {
    token = t;
    try { localStorage.setItem(STORAGE_KEY, t); } catch (e) { /* storage disabled: the URL keeps it */ }
    history.replaceState(null, "", location.pathname + location.search + "#token=" + t);
  }

  function forgetToken() {
    token = null;
    try { localStorage.removeItem(STORAGE_KEY); } catch (e) { /* nothing stored */ }
    history.replaceState(null, "", location.pathname + location.search);
  }

  function problem(message) {
    $("problem-text").textContent = message;
    show("problem");
  }

  function setProgress(done, total) {
    var bar = $("progress");
    bar.setAttribute("aria-valuemax", String(total));
    bar.setAttribute("aria-valuenow", String(done));
    $("progress-fill").style.width = (total ? (100 * done / total) : 0).toFixed(2) + "%";
    $("progress-text").textContent = done + " / " + total;
  }

  function setButtons(enabled) {
    var buttons = document.querySelectorAll("button.resp");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].disabled = !enabled;
      if (enabled) { buttons[i].classList.remove("chosen"); }
    }
  }

  function render(state) {
    setProgress(state.n_answered, state.n_trials);
    if (state.done) {
      current = null;
      if (state.completion_code) {
        $("completion-code").textContent = state.completion_code;
        $("code-line").hidden = false;
      }
      if (state.completion_url) {
        $("completion-link").href = state.completion_url;
        $("link-line").hidden = false;
      }
      show("end");
      return;
    }
    current = state.trial;
    $("sentence-left").textContent = current.left;
    $("sentence-right").textContent = current.right;
    $("trial").setAttribute("data-trial", String(current.id));
    setButtons(true);
    show("trial");
    shownAt = performance.now();
    busy = false;
  }

  async function refresh() {
    var r = await apiRetry("GET", "api/state");
    if (r.status === 200) { render(r.data); return true; }
    if (r.status === 401) { forgetToken(); return false; }
    throw new Error((r.data && r.data.error) || ("HTTP " + r.status));
  }

  async function start() {
    show("loading");
    try {
      token = readToken();
      if (token) {
        saveToken(token);
        if (await refresh()) { return; }
      }
      show("instructions");
    } catch (err) { problem(String(err.message || err)); }
  }

  async function proceed() {
    $("proceed").disabled = true;
    try {
      var cfg = await apiRetry("GET", "api/config");
      if (cfg.status !== 200) { throw new Error((cfg.data && cfg.data.error) || ("HTTP " + cfg.status)); }
      var external = new URLSearchParams(location.search).get(cfg.data.external_id_param);
      var r = await apiRetry("POST", "api/participants", { external_id: external || null });
      // 201: a new participant; 409: this platform id already has a session (resumed only with its token)
      if (r.status !== 201) { throw new Error((r.data && r.data.error) || ("HTTP " + r.status)); }
      saveToken(r.data.token);
      await refresh();
    } catch (err) { problem(String(err.message || err)); }
    finally { $("proceed").disabled = false; }
  }

  async function answer(button) {
    if (busy || !current) { return; }
    busy = true;
    var rating = parseInt(button.getAttribute("data-rating"), 10);
    var rt = performance.now() - shownAt;
    setButtons(false);
    button.classList.add("chosen");
    try {
      var r = await apiRetry("POST", "api/responses",
        { trial: current.id, rating: rating, reaction_time_ms: Math.round(rt * 10) / 10 });
      if (r.status === 201) { render(r.data); return; }
      if (r.status === 409) { await refresh(); return; }  // already stored (e.g. a retried request)
      if (r.status === 401) { forgetToken(); show("instructions"); return; }
      throw new Error((r.data && r.data.error) || ("HTTP " + r.status));
    } catch (err) { busy = false; problem(String(err.message || err)); }
  }

  document.addEventListener("DOMContentLoaded", function () {
    $("proceed").addEventListener("click", proceed);
    $("retry").addEventListener("click", start);
    var buttons = document.querySelectorAll("button.resp");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].addEventListener("click", function (ev) { answer(ev.currentTarget); });
    }
    start();
  });
})();
