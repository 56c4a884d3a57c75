// The chainlens operator console: a plain-JS single page over the
// console's JSON calls (api/…, relative to this page). Every value shown
// is also written to a data-v attribute under a data-k name, raw, so a
// test can compare what the page shows with `chainlens status`, /metrics
// and the campaign report.
(function () {
  'use strict';

  var state = { session: null, window: '1h', job: '', timer: null, plots: [] };
  var main = document.getElementById('main');

  // el builds an element; text children are text nodes (never HTML).
  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === undefined || v === null || v === false) return;
        if (k === 'class') e.className = v;
        else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? '' : String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  function add(parent, c) {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) { c.forEach(function (x) { add(parent, x); }); return; }
    parent.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  // val is a shown value with its raw form for tests.
  function val(tag, key, raw, shown, cls) {
    return el(tag, { 'data-k': key, 'data-v': raw === null || raw === undefined ? '' : String(raw), class: cls }, shown === undefined ? fmt(raw) : shown);
  }
  function fmt(n) {
    if (n === null || n === undefined || n === '') return '–';
    if (typeof n === 'number') return n.toLocaleString('en-US', { maximumFractionDigits: 3 });
    return String(n);
  }
  function when(t) {
    if (!t || t.indexOf('0001-') === 0) return '–';
    return t.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
  }

  function ApiError(status, problem) {
    this.status = status;
    this.problem = problem || {};
    this.message = (problem && (problem.detail || problem.title)) || ('HTTP ' + status);
  }

  // call fetches a console call; a 401 sends back to the login.
  function call(method, path, body, raw) {
    var headers = {};
    if (state.session && method !== 'GET') headers['X-CSRF-Token'] = state.session.csrf;
    var init = { method: method, headers: headers, credentials: 'same-origin' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
    }
    return fetch(path, init).then(function (res) {
      if (res.status === 204) return null;
      return res.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        if (!res.ok) {
          if (res.status === 401 && path !== 'login') { showLogin(new ApiError(res.status, data)); }
          throw new ApiError(res.status, data);
        }
        return raw ? text : data;
      });
    });
  }

  function errorBox(err) {
    var p = err.problem || {};
    var lines = [err.message];
    (p.invalid_params || []).forEach(function (ip) { lines.push(ip.name + ': ' + ip.reason); });
    return el('div', { class: 'error', role: 'alert', 'data-k': 'error' }, lines.join('\n'));
  }

  function clearPage() {
    if (state.timer) { clearInterval(state.timer); state.timer = null; }
    state.plots.forEach(function (p) { p.destroy(); });
    state.plots = [];
    main.textContent = '';
  }

  // ---- login ----
  function showLogin(err) {
    clearPage();
    state.session = null;
    document.getElementById('nav').hidden = true;
    document.getElementById('logout').hidden = true;
    document.getElementById('who').textContent = '';
    var input = el('input', { type: 'password', id: 'key', name: 'key', autocomplete: 'off', placeholder: 'sk_…', required: true });
    var msg = el('div');
    if (err && err.status !== 401) add(msg, errorBox(err));
    var form = el('form', { class: 'login', id: 'login', onsubmit: function (ev) {
      ev.preventDefault();
      msg.textContent = '';
      call('POST', 'login', { key: input.value }).then(function (s) {
        input.value = '';
        state.session = s;
        started();
      }).catch(function (e) { add(msg, errorBox(e)); });
    } },
    el('h1', null, 'Log in'),
    el('p', { class: 'muted' }, 'The console is for operators: log in with a secret API key of the admin scope (chainlens keys create --scopes admin).'),
    input, msg, el('button', { class: 'primary', type: 'submit' }, 'Log in'));
    add(main, form);
    input.focus();
  }

  function started() {
    document.getElementById('nav').hidden = false;
    document.getElementById('logout').hidden = false;
    document.getElementById('who').textContent = 'key ' + state.session.key_name;
    route();
  }

  document.getElementById('logout').addEventListener('click', function () {
    call('POST', 'logout').finally(function () { showLogin(); });
  });

  // ---- charts ----
  var palette = ['#3b5bdb', '#e8590c', '#2b8a3e', '#ae3ec9', '#1098ad', '#f08c00', '#c92a2a', '#5c940d', '#862e9c', '#495057'];

  function chartCard(c) {
    var box = el('div', { class: 'chart' });
    var card = el('div', { class: 'card', 'data-k': 'chart.' + c.id, 'data-v': c.t.length }, el('h3', null, c.title + ' (' + c.unit + ')'), box);
    if (!c.t.length || !c.lines.length) {
      add(box, el('div', { class: 'empty' }, 'No samples in this window yet (every process samples its metrics each console.sample_every).'));
      return card;
    }
    var data = [c.t].concat(c.lines.map(function (l) { return l.values; }));
    var series = [{}].concat(c.lines.map(function (l, i) {
      return { label: l.name || 'all', stroke: palette[i % palette.length], width: 1.5, spanGaps: true };
    }));
    requestAnimationFrame(function () {
      var width = Math.max(300, box.clientWidth || 420);
      // One point (a campaign's first day) gets a day either side.
      var x = { range: function (u, min, max) { return min === max ? [min - 86400, max + 86400] : [min, max]; } };
      state.plots.push(new uPlot({ width: width, height: 200, series: series, scales: { x: x }, axes: [{}, { size: 60 }], legend: { live: false } }, data, box));
    });
    return card;
  }

  function charts(list) {
    return el('div', { class: 'grid' }, (list || []).map(chartCard));
  }

  function windowBar(reload) {
    return el('div', { class: 'toolbar' }, el('span', { class: 'muted' }, 'Window:'), [['15m', 'Last 15 minutes'], ['1h', 'Last hour'], ['1d', 'Last day']].map(function (w) {
      return el('button', { type: 'button', class: state.window === w[0] ? 'on' : '', 'data-window': w[0], onclick: function () { state.window = w[0]; reload(); } }, w[1]);
    }));
  }

  // editing says whether a form of the page holds input or focus.
  function editing() {
    var a = document.activeElement;
    if (a && a.form && main.contains(a)) return true;
    return Array.prototype.some.call(main.querySelectorAll('form input'), function (i) {
      return (i.type === 'checkbox' ? i.checked : i.type === 'file' ? i.files.length > 0 : i.value !== '');
    });
  }

  // page loads a page's data, renders it, and refreshes it every 10 s.
  function page(title, load, render) {
    clearPage();
    var body = el('div');
    add(main, [el('h1', null, title), body]);
    function reload(auto) {
      if (auto === true && editing()) return Promise.resolve(); // never wipe what the user is typing
      return load().then(function (d) {
        state.plots.forEach(function (p) { p.destroy(); });
        state.plots = [];
        body.textContent = '';
        add(body, render(d, reload));
        body.setAttribute('data-loaded', String(Date.now()));
      }).catch(function (e) {
        if (e.status === 401) return;
        body.textContent = '';
        add(body, errorBox(e));
      });
    }
    reload();
    state.timer = setInterval(function () { reload(true); }, 10000);
    return reload;
  }

  // ---- chains ----
  function chainsPage() {
    page('Chains', function () { return call('GET', 'api/chains?window=' + state.window); }, function (d, reload) {
      var rows = d.chains.map(function (c) {
        var k = 'chain.' + c.id + '.';
        if (!c.started) {
          return el('tr', null, val('td', k + 'id', c.id), el('td', null, c.kind), val('td', k + 'indexed', 'not started', 'not started'), el('td', { colspan: 6 }));
        }
        return el('tr', null,
          val('td', k + 'id', c.id), el('td', null, c.kind),
          val('td', k + 'indexed', c.indexed, undefined, 'num'), val('td', k + 'node_tip', c.node_tip, undefined, 'num'),
          val('td', k + 'lag', c.lag, undefined, c.lag > 10 ? 'num bad' : 'num'),
          val('td', k + 'last_block_time', c.last_block_time, when(c.last_block_time)),
          val('td', k + 'opening', c.opening_state), val('td', k + 'snapshots', c.snapshots),
          val('td', k + 'dead_letters', c.dead_letters.length, undefined, c.dead_letters.length ? 'num bad' : 'num'));
      });
      var dead = [];
      d.chains.forEach(function (c) {
        (c.dead_letters || []).forEach(function (x) {
          dead.push(el('tr', null, el('td', null, c.id), el('td', { class: 'num' }, fmt(x.height)), el('td', { class: 'num' }, fmt(x.attempts)), el('td', null, when(x.next_retry_at)), el('td', null, el('code', null, x.last_error))));
        });
      });
      var rpc = (d.rpc || []).map(function (r) {
        var l = r.labels;
        return el('tr', null, el('td', null, l.chain), el('td', null, l.index), el('td', null, l.endpoint),
          val('td', 'rpc.' + l.chain + '.' + l.index + '.up', r.value, r.value >= 1 ? 'up' : 'skipped after failures', r.value >= 1 ? 'ok' : 'bad'), el('td', null, when(r.at)));
      });
      var retention = d.chains.filter(function (c) { return c.retention; }).map(function (c) {
        return el('tr', null, el('td', null, c.id), el('td', null, c.retention.setting), val('td', 'chain.' + c.id + '.pruned_below', c.retention.pruned_below, c.retention.pruned_below ? 'from ' + fmt(c.retention.pruned_below) : 'nothing dropped', 'num'));
      });
      return [
        el('table', { 'data-k': 'chains' },
          el('thead', null, el('tr', null, ['Chain', 'Kind', 'Indexed', 'Node tip', 'Lag', 'Last block', 'Opening state', 'Snapshots', 'Dead letters'].map(function (h) { return el('th', null, h); }))),
          el('tbody', null, rows)),
        windowBar(reload),
        charts(d.charts),
        el('h2', null, 'RPC endpoints'),
        rpc.length ? el('table', null, el('thead', null, el('tr', null, ['Chain', '#', 'Endpoint', 'State', 'Sampled'].map(function (h) { return el('th', null, h); }))), el('tbody', null, rpc))
          : el('p', { class: 'muted' }, 'No indexer has sampled its endpoints in the last two sampling periods.'),
        el('h2', null, 'Dead letters'),
        dead.length ? el('table', null, el('thead', null, el('tr', null, ['Chain', 'Height', 'Attempts', 'Next retry', 'Last error'].map(function (h) { return el('th', null, h); }))), el('tbody', null, dead))
          : el('p', { class: 'muted' }, 'None: every indexed height is committed.'),
        retention.length ? [el('h2', null, 'Retention'), el('table', null, el('tbody', null, retention))] : null
      ];
    });
  }

  // ---- jobs ----
  function jobsPage() {
    page('Aggregator jobs', function () {
      return call('GET', 'api/jobs?window=' + state.window + (state.job ? '&job=' + encodeURIComponent(state.job) : ''));
    }, function (d, reload) {
      if (!state.job && d.jobs.length) state.job = d.jobs[0].name;
      if (state.job && !d.charts.length && d.jobs.some(function (j) { return j.name === state.job; })) {
        setTimeout(reload, 0); // first load: now with the job's charts
      }
      var rows = d.jobs.map(function (j) {
        var k = 'job.' + j.name + '.';
        return el('tr', { class: 'pick' + (j.name === state.job ? ' picked' : ''), onclick: function () { state.job = j.name; reload(); } },
          val('td', k + 'name', j.name), el('td', null, j.chain || '–'), val('td', k + 'watermark', j.watermark, undefined, 'num'),
          val('td', k + 'height', j.height, j.chain ? fmt(j.height) : '–', 'num'), val('td', k + 'tip', j.tip, j.chain ? fmt(j.tip) : '–', 'num'),
          val('td', k + 'behind', j.chain ? Math.max(0, j.tip - j.height) : '', j.chain ? fmt(Math.max(0, j.tip - j.height)) : '–', 'num'),
          val('td', k + 'last_run', j.last_run || '', when(j.last_run)),
          val('td', k + 'duration_ms', j.duration_ms, fmt(j.duration_ms) + ' ms', 'num'), val('td', k + 'rows', j.rows, undefined, 'num'),
          val('td', k + 'last_error', j.last_error || '', j.last_error || '–', j.last_error ? 'bad' : ''));
      });
      return [
        el('table', { 'data-k': 'jobs' },
          el('thead', null, el('tr', null, ['Job', 'Chain', 'Watermark', 'Built through', 'Tip', 'Behind', 'Last run', 'Duration', 'Rows', 'Last error'].map(function (h) { return el('th', null, h); }))),
          el('tbody', null, rows)),
        el('h2', null, state.job ? 'Job ' + state.job + ' over time' : 'No job has run yet'),
        windowBar(reload),
        charts(d.charts)
      ];
    });
  }

  // ---- API and keys ----
  function apiPage() {
    page('API', function () {
      return Promise.all([call('GET', 'api/api?window=' + state.window), call('GET', 'api/keys')]);
    }, function (both, reload) {
      var d = both[0], keys = both[1];
      var groups = d.groups.map(function (g) {
        var k = 'api.' + g.group + '.';
        return el('tr', null, el('td', null, g.group), val('td', k + 'requests', g.requests, undefined, 'num'),
          val('td', k + 'errors_4xx', g.errors_4xx, undefined, 'num'), val('td', k + 'errors_5xx', g.errors_5xx, undefined, g.errors_5xx ? 'num bad' : 'num'),
          val('td', k + 'p50_ms', g.p50_ms, undefined, 'num'), val('td', k + 'p99_ms', g.p99_ms, undefined, 'num'));
      });
      var lookups = d.cache.hit + d.cache.stale + d.cache.miss;
      var top = d.top_keys.map(function (u) {
        return el('tr', null, el('td', null, u.name), val('td', 'top.' + u.key_id + '.credits', u.credits, undefined, 'num'), el('td', { class: 'num' }, fmt(u.calls)), el('td', { class: 'num' }, fmt(u.quota)), el('td', null, when(u.period_start)));
      });
      return [
        el('p', { class: 'muted' }, 'Totals since this API process started (its /metrics); the charts add up every API process.'),
        el('div', { class: 'tiles' },
          el('div', { class: 'tile' }, val('div', 'cache.hit', d.cache.hit, undefined, 'v'), el('div', { class: 'k' }, 'cache hits')),
          el('div', { class: 'tile' }, val('div', 'cache.stale', d.cache.stale, undefined, 'v'), el('div', { class: 'k' }, 'stale answers')),
          el('div', { class: 'tile' }, val('div', 'cache.miss', d.cache.miss, undefined, 'v'), el('div', { class: 'k' }, 'misses')),
          el('div', { class: 'tile' }, el('div', { class: 'v' }, lookups ? (100 * (d.cache.hit + d.cache.stale) / lookups).toFixed(1) + ' %' : '–'), el('div', { class: 'k' }, 'hit rate'))),
        el('h2', null, 'Per endpoint group'),
        groups.length ? el('table', { 'data-k': 'groups' }, el('thead', null, el('tr', null, ['Group', 'Requests', '4xx', '5xx', 'p50 ms', 'p99 ms'].map(function (h) { return el('th', { class: h === 'Group' ? '' : 'num' }, h); }))), el('tbody', null, groups))
          : el('p', { class: 'muted' }, 'No request yet.'),
        windowBar(reload),
        charts(d.charts),
        el('h2', null, 'Top keys by credits (current period)'),
        top.length ? el('table', null, el('thead', null, el('tr', null, ['Key', 'Credits', 'Calls', 'Quota', 'Period start'].map(function (h) { return el('th', null, h); }))), el('tbody', null, top))
          : el('p', { class: 'muted' }, 'No metered call yet.'),
        keysSection(keys, reload)
      ];
    });
  }

  function keysSection(d, reload) {
    var out = el('div');
    var rows = d.keys.map(function (k) {
      var revoked = !!k.revoked_at;
      return el('tr', { 'data-key-id': k.id },
        val('td', 'key.' + k.id + '.id', k.id, undefined, 'num'), val('td', 'key.' + k.id + '.name', k.name), el('td', null, k.kind), el('td', null, el('code', null, k.hint + '…')),
        el('td', null, k.scopes.join(', ')), el('td', null, k.origins.join(', ') || '–'),
        val('td', 'key.' + k.id + '.credits', k.usage ? k.usage.credits : 0, undefined, 'num'), el('td', { class: 'num' }, fmt(k.quota_credits)),
        val('td', 'key.' + k.id + '.revoked', revoked ? k.revoked_at : '', revoked ? 'revoked ' + when(k.revoked_at) : 'live', revoked ? 'muted' : 'ok'),
        el('td', null, revoked ? null : el('button', { type: 'button', 'data-revoke': k.id, onclick: function () {
          if (!window.confirm('Revoke key ' + k.name + '? Every process refuses it within a second.')) return;
          call('POST', 'api/keys/' + k.id + '/revoke').then(reload).catch(function (e) { add(out, errorBox(e)); });
        } }, 'Revoke')));
    });
    var msg = el('div');
    var f = {
      name: el('input', { name: 'name', required: true, placeholder: 'site' }),
      publishable: el('input', { type: 'checkbox', name: 'publishable' }),
      origins: el('input', { name: 'origins', placeholder: 'https://site.example' }),
      credits: el('input', { name: 'credits', type: 'number', min: 0, placeholder: 'default' }),
      period: el('input', { name: 'period', placeholder: 'default (720h)' }),
      rate: el('input', { name: 'rate', type: 'number', min: 0, step: 'any', placeholder: 'default' }),
      burst: el('input', { name: 'burst', type: 'number', min: 0, placeholder: 'default' })
    };
    var scopes = d.scopes.map(function (s) { return el('label', { class: 'scope' }, el('input', { type: 'checkbox', name: 'scope', value: s }), s); });
    var form = el('form', { class: 'inline', id: 'create-key', onsubmit: function (ev) {
      ev.preventDefault();
      msg.textContent = '';
      var body = {
        name: f.name.value, publishable: f.publishable.checked,
        scopes: scopes.map(function (l) { return l.firstChild; }).filter(function (c) { return c.checked; }).map(function (c) { return c.value; }),
        origins: f.origins.value ? f.origins.value.split(',') : [],
        credits: Number(f.credits.value || 0), rate: Number(f.rate.value || 0), burst: Number(f.burst.value || 0), period: f.period.value
      };
      call('POST', 'api/keys', body).then(function (k) {
        if (state.timer) { clearInterval(state.timer); state.timer = null; } // keep the key on screen
        msg.textContent = '';
        add(msg, [el('p', null, 'Key ', el('b', null, k.name), ' created (id ' + k.id + '). It is shown only this once:'), el('div', { class: 'secret', 'data-k': 'created-key', 'data-v': k.key }, k.key)]);
      }).catch(function (e) { add(msg, errorBox(e)); });
    } },
    el('label', null, 'Name', f.name), el('label', null, 'Scopes', el('span', { class: 'scopes' }, scopes)),
    el('label', null, 'Publishable', f.publishable), el('label', null, 'Origins (publishable)', f.origins),
    el('label', null, 'Credits', f.credits), el('label', null, 'Period', f.period), el('label', null, 'Rate /s', f.rate), el('label', null, 'Burst', f.burst),
    el('button', { class: 'primary', type: 'submit' }, 'Create key'));
    add(out, [el('h2', null, 'Keys'),
      el('table', { 'data-k': 'keys' }, el('thead', null, el('tr', null, ['ID', 'Name', 'Kind', 'Hint', 'Scopes', 'Origins', 'Credits used', 'Quota', 'State', ''].map(function (h) { return el('th', null, h); }))), el('tbody', null, rows)),
      el('h2', null, 'Create a key'), form, msg]);
    return out;
  }

  // ---- campaigns ----
  function campaignsPage() {
    page('Campaigns', function () { return call('GET', 'api/campaigns'); }, function (list, reload) {
      var msg = el('div');
      var rows = list.map(function (c) {
        var k = 'campaign.' + c.id + '.';
        var next = c.status === 'paused' ? 'resume' : 'pause';
        return el('tr', { class: 'pick', onclick: function (ev) { if (ev.target.tagName !== 'BUTTON') location.hash = '#campaign/' + c.id; } },
          val('td', k + 'id', c.id, undefined, 'num'), val('td', k + 'name', c.name), el('td', null, c.owner),
          val('td', k + 'status', c.status, undefined, c.status === 'paused' ? 'muted' : 'ok'), el('td', { class: 'num' }, fmt(c.priority)),
          el('td', null, when(c.start_date)), el('td', null, when(c.end_date)),
          el('td', null, el('button', { type: 'button', 'data-action': next, 'data-campaign': c.id, onclick: function () {
            call('POST', 'api/campaigns/' + c.id + '/' + next).then(reload).catch(function (e) { add(msg, errorBox(e)); });
          } }, next === 'pause' ? 'Pause' : 'Resume')));
      });
      var file = el('input', { type: 'file', accept: 'application/json,.json', id: 'import-file' });
      var importForm = el('form', { class: 'inline', id: 'import', onsubmit: function (ev) {
        ev.preventDefault();
        msg.textContent = '';
        if (!file.files.length) { add(msg, errorBox({ message: 'Choose a campaigns file (JSON, as chainlens campaigns export writes it).' })); return; }
        file.files[0].text().then(function (text) {
          return call('POST', 'api/campaigns', text);
        }).then(function (res) {
          reload().then(function () { add(main, el('p', { class: 'ok', 'data-k': 'imported', 'data-v': res.campaigns }, 'Imported ' + res.campaigns + ' campaign(s) and ' + res.audiences + ' audience(s).')); });
        }).catch(function (e) { add(msg, errorBox(e)); });
      } }, el('label', null, 'Import a campaigns file', file), el('button', { class: 'primary', type: 'submit' }, 'Import'),
      el('a', { class: 'button', href: 'api/campaigns/export', download: 'campaigns.json', 'data-k': 'export' }, 'Export all'));
      return [
        list.length ? el('table', { 'data-k': 'campaigns' }, el('thead', null, el('tr', null, ['ID', 'Name', 'Owner', 'Status', 'Priority', 'Start', 'End', ''].map(function (h) { return el('th', null, h); }))), el('tbody', null, rows))
          : el('p', { class: 'muted' }, 'No campaign yet: import a campaigns file.'),
        el('h2', null, 'Import and export'), importForm, msg
      ];
    });
  }

  function campaignPage(id) {
    page('Campaign ' + id, function () { return call('GET', 'api/campaigns/' + id + '/report'); }, function (d) {
      var r = d.report;
      var back = el('p', null, el('a', { href: '#campaigns' }, '← Campaigns'));
      if (!r) return [back, el('p', { class: 'muted', 'data-k': 'report.pending' }, 'No report yet: the engagement_reports job has not run since the campaign was created.')];
      var conv = r.website_conversions + r.onchain_conversions;
      function tile(key, v, label, shown) { return el('div', { class: 'tile' }, val('div', 'report.' + key, v, shown, 'v'), el('div', { class: 'k' }, label)); }
      var top = Math.max(r.impressions, r.clicks, conv, 1);
      function bar(label, n) {
        return el('div', { class: 'frow' }, el('span', { class: 'flabel' }, label), el('div', { class: 'bar', 'data-width': Math.round(100 * n / top) }), el('span', { class: 'fnum' }, fmt(n)));
      }
      var funnel = el('div', { class: 'card funnel' }, el('h3', null, 'Funnel'), bar('Impressions', r.impressions), bar('Clicks', r.clicks), bar('Conversions', conv));
      funnel.querySelectorAll('.bar').forEach(function (b) { b.style.width = Math.max(0.5, 0.6 * Number(b.getAttribute('data-width'))) + '%'; });
      var days = d.days;
      var t = days.map(function (x) { return Date.parse(x.day + 'T00:00:00Z') / 1000; });
      function line(name, f) { return { name: name, values: days.map(f) }; }
      var dayCharts = [
        { id: 'reach', title: 'Impressions and clicks per day', unit: 'count', t: t, lines: [line('impressions', function (x) { return x.impressions; }), line('clicks', function (x) { return x.clicks; })] },
        { id: 'conversions', title: 'Conversions per day: on-chain vs website', unit: 'count', t: t, lines: [line('on-chain', function (x) { return x.onchain_conversions; }), line('website', function (x) { return x.website_conversions; })] },
        { id: 'value', title: 'Conversion value per day', unit: 'USD', t: t, lines: [line('value', function (x) { return Number(x.conversion_value_usd); })] }
      ];
      return [back,
        el('div', { class: 'tiles' },
          tile('impressions', r.impressions, 'impressions'), tile('clicks', r.clicks, 'clicks'), tile('ctr', r.ctr, 'click-through rate'),
          tile('website_conversions', r.website_conversions, 'website conversions'), tile('onchain_conversions', r.onchain_conversions, 'on-chain conversions'),
          tile('conversion_value_usd', r.conversion_value_usd, 'conversion value (USD)'), tile('unique_wallets', r.unique_wallets, 'unique wallets'),
          tile('converting_wallets', r.converting_wallets, 'converting wallets')),
        el('p', { class: 'muted' }, 'Report computed ' + when(r.computed_at) + '.'),
        el('div', { class: 'grid' }, funnel, dayCharts.map(chartCard))
      ];
    });
  }

  // ---- routing ----
  function route() {
    if (!state.session) return;
    var h = location.hash.replace(/^#/, '') || 'chains';
    var m = /^campaign\/(\d+)$/.exec(h);
    document.querySelectorAll('nav a').forEach(function (a) {
      a.classList.toggle('active', a.getAttribute('data-page') === (m ? 'campaigns' : h));
    });
    if (m) return campaignPage(m[1]);
    switch (h) {
      case 'jobs': return jobsPage();
      case 'api': return apiPage();
      case 'campaigns': return campaignsPage();
      default: return chainsPage();
    }
  }
  window.addEventListener('hashchange', route);

  call('GET', 'api/session').then(function (s) { state.session = s; started(); }).catch(function (e) { if (e.status !== 401) showLogin(e); });
})();
