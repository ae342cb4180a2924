//! The "try it" panel every report page carries, and what it shares with
//! `battlelab playground`: the embedded WebAssembly core, the Worker it runs in, and the
//! drawing of results.
//!
//! Why this module exists: a designer shares a page and the co-designer asks "and with a
//! +1?". The page answers in place: it carries the analysis file (and its rules file),
//! the core compiled to WebAssembly (`crate::report::wasm::MODULE_GZ`, gzip, base64,
//! inline), and a script that runs the core in a Web Worker and redraws the numbers. The
//! module speaks JSON (`docs/wasm-api.md`): `describe` lists the file's settings with
//! what each allows, `run` (exact) or `start`/`step`/`finish` (Monte Carlo, for the
//! progress bar) compute, `download` returns the edited files. Every number the panel
//! shows is the module's, which is the CLI's code: the same seed and trials give the same
//! counts as `battlelab run`.
//!
//! What the panel promises:
//! - **No network.** The module is unpacked with `DecompressionStream('gzip')` from the
//!   page's own text and instantiated in a Worker made from a Blob URL. The page's
//!   Content-Security-Policy gains `'wasm-unsafe-eval'` (compiling WebAssembly) and
//!   `worker-src blob:` — the smallest addition that lets a Blob worker start under
//!   `default-src 'none'` (without it, `worker-src` falls back to `script-src`, which
//!   would need `blob:` for every script). Nothing is fetched: it works from `file://`.
//! - **Edits are a link.** Every change lives in the URL hash (`#tryit=<JSON>`): opening
//!   the link reproduces it; "reset" returns to the file; "download" saves the edited
//!   analysis (and rules file) as `battlelab run` accepts them.
//! - **The CLI's words.** A bad value shows the module's error — the CLI's message — at
//!   its field. Every text from a file reaches the page as text (`textContent`), never
//!   as markup.
//! - **A self-test.** `#tryit-selftest=<JSON>` types values into the panel's fields (or
//!   opens a shared link), waits for the result and writes `TRYIT {verdict}` with the
//!   numbers shown, the errors at fields, the hash and the timings into
//!   `<pre id="tryit-selftest">`; `tests/browser.rs` drives it in headless Chromium.
//!
//! Where the module could not be built, the page has no panel and says why in a comment.

use std::path::Path;

use base64::Engine as _;

/// The element the base64 of the module is written in (its text is all base64).
pub const MODULE_ELEMENT: &str = "<script type=\"application/octet-stream\" id=\"bl-module\">";

/// The page's Content-Security-Policy with the panel: nothing from outside, inline style
/// and script, WebAssembly compiled from the page's own bytes, a worker from a Blob URL.
pub const CSP_WITH_WASM: &str = "default-src 'none'; img-src 'self' file:; style-src 'unsafe-inline'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; worker-src blob:; base-uri 'none'; form-action 'none'";

/// The most battles the page simulates to reprice a value page whose arms are not all
/// exact (arms × trials) or to compare two variants again (pairs × 2 × trials): the
/// script's `PAGE_BATTLES`, in words.
const PAGE_BATTLES_TEXT: &str = "20 million";

/// The analysis a page recomputes: its file name (as messages name it), its text, and the
/// companion files it names (a rules file), each under the name the analysis gives it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Source {
    pub analysis_name: String,
    pub analysis_text: String,
    pub files: Vec<(String, String)>,
    /// The cells of the page's rulebook tables the panel recomputes, the runs (variant
    /// and coordinates, in the plan's order) they read, and the tables printed from the
    /// rules as read that it reprints (each table's index, key and the line under it):
    /// `{"tables", "cells", "runs", "printed"}`.
    pub live: Option<serde_json::Value>,
    /// What the panel recomputes where the page is not a run's report (a compare, value
    /// or equilibrium report): shown under the panel's heading, as text. `None` on a
    /// run's page, whose tables and charts the panel updates itself.
    pub scope: Option<String>,
    /// On a `battlelab value` page, what the command was asked (`{"modifiers",
    /// "headline", "trials", "seed"}`): the panel reprices the edited file with the
    /// module's `value` op and rewrites the page's price tables.
    pub reprice: Option<serde_json::Value>,
    /// On a `battlelab compare --variants` or `battlelab equilibrium` page, the module's
    /// op that answers the page's question again and what the command was asked
    /// (`{"op": "compare", "variants", "trials", "seed", "fdr", "alpha"}` or `{"op":
    /// "equilibrium", "payoff"}`): the panel asks it of the edited file and rewrites the
    /// page's answer (its `tables.md` sections) with the text the command prints.
    pub answer: Option<serde_json::Value>,
}

impl Source {
    /// `analysis_text`, read from `analysis_path` (as the user named it), with every
    /// companion file it names that can be read beside it ([`companions`]).
    pub fn of(analysis_path: &Path, analysis_text: &str) -> Self {
        Self {
            analysis_name: analysis_path.file_name().map_or_else(
                || crate::output::ANALYSIS_COPY.to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            analysis_text: analysis_text.to_string(),
            files: companions(analysis_path, analysis_text),
            live: None,
            scope: None,
            reprice: None,
            answer: None,
        }
    }

    /// [`Source::of`] for a `battlelab compare FILE --variants A,B` page: the panel
    /// recomputes the runs and compares the edited file's two variants as the command did
    /// (`asked`: `{"variants": [A, B], "trials", "seed", "fdr", "alpha"}`), rewriting the
    /// page's comparison.
    pub fn of_compare_report(
        analysis_path: &Path,
        analysis_text: &str,
        asked: serde_json::Value,
    ) -> Self {
        let name = file_name(analysis_path);
        let mut answer = asked;
        answer["op"] = "compare".into();
        Self {
            scope: Some(format!("This panel recomputes the runs of {name} with your changes: every variant's odds, and this page's comparison (its table and summary), as battlelab compare compares the edited file's two variants with the same seed, trials and correction, where that is at most {PAGE_BATTLES_TEXT} battles (beyond that, run battlelab compare on the file you download).")),
            answer: Some(answer),
            ..Self::of(analysis_path, analysis_text)
        }
    }

    /// [`Source::of`] for a `battlelab equilibrium` page: the panel recomputes the runs and
    /// solves the edited file's games for the payoff the command was given (`payoff`:
    /// `--payoff`, or none for the file's own), rewriting the page's equilibria.
    pub fn of_equilibrium_report(
        analysis_path: &Path,
        analysis_text: &str,
        payoff: Option<&str>,
    ) -> Self {
        let name = file_name(analysis_path);
        Self {
            scope: Some(format!("This panel recomputes the runs of {name} with your changes: every variant's odds, and this page's equilibria (each run's value, both sides' mixes and shortfalls), as battlelab equilibrium solves the edited file for the same payoff.")),
            answer: Some(serde_json::json!({"op": "equilibrium", "payoff": payoff})),
            ..Self::of(analysis_path, analysis_text)
        }
    }

    /// [`Source::of`] for a `battlelab value` page: the panel recomputes the runs and
    /// reprices the edited file as `battlelab value` was asked (`asked`: `{"modifiers",
    /// "headline", "trials", "seed"}`), rewriting the page's price tables.
    pub fn of_value_report(
        analysis_path: &Path,
        analysis_text: &str,
        asked: serde_json::Value,
    ) -> Self {
        let name = file_name(analysis_path);
        Self {
            scope: Some(format!("This panel recomputes the runs of {name} with your changes: every variant's odds, and this page's prices (the tables of the answer), as battlelab value prices the edited file with the same modifiers, seed and trials. Exact prices are recomputed at once; Monte Carlo ones with the command line's seed and trials, where that is at most {} battles (beyond that, run battlelab value on the file you download).", PAGE_BATTLES_TEXT)),
            reprice: Some(asked),
            ..Self::of(analysis_path, analysis_text)
        }
    }

    /// The JSON the page's script reads: `{"analysis": {name, text}, "files": {…},
    /// "companion_key": the analysis key that names a companion file, or null}`.
    fn json(&self) -> serde_json::Value {
        let files: serde_json::Map<String, serde_json::Value> = self
            .files
            .iter()
            .map(|(n, t)| (n.clone(), serde_json::Value::String(t.clone())))
            .collect();
        serde_json::json!({
            "analysis": {"name": self.analysis_name, "text": self.analysis_text},
            "files": files,
            "companion_key": companion_key(&self.analysis_text),
            "live": self.live,
            "reprice": self.reprice,
            "answer": self.answer,
        })
    }
}

/// The analysis's file name (no folder), as the scope line names it.
fn file_name(analysis_path: &Path) -> String {
    analysis_path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// The analysis key that names a companion file (`rules`), where the analysis's system
/// has one.
fn companion_key(analysis_text: &str) -> Option<&'static str> {
    let table = toml::from_str::<toml::Table>(analysis_text).ok()?;
    let system = table.get("system").and_then(|v| v.as_str())?;
    battlelab_core::systems::docs()
        .into_iter()
        .find(|d| d.name == system)
        .and_then(|d| d.companion)
        .map(|c| c.key)
}

/// The companion files an analysis names (its system's `Companion` key, at the top and in
/// each `[[variant]]`), read relative to the analysis, keyed as the analysis writes them.
/// A name that is not a readable file beside it (a shipped rules file's name, which the
/// module carries itself) is left out; the module then says what is missing, as the CLI
/// would.
pub fn companions(analysis_path: &Path, analysis_text: &str) -> Vec<(String, String)> {
    let Ok(table) = toml::from_str::<toml::Table>(analysis_text) else {
        return Vec::new();
    };
    let Some(key) = companion_key(analysis_text) else {
        return Vec::new();
    };
    let mut named: Vec<String> = Vec::new();
    let mut take = |t: &toml::Table| {
        if let Some(name) = t.get(key).and_then(|v| v.as_str()) {
            if !named.iter().any(|n| n == name) {
                named.push(name.to_string());
            }
        }
    };
    take(&table);
    if let Some(variants) = table.get("variant").and_then(|v| v.as_array()) {
        for v in variants.iter().filter_map(|v| v.as_table()) {
            take(v);
        }
    }
    let dir = analysis_path.parent().unwrap_or(Path::new(""));
    named
        .into_iter()
        .filter_map(|name| {
            let path = dir.join(&name);
            if !path.is_file() {
                return None;
            }
            crate::toml_input::read_analysis_file(&path)
                .ok()
                .map(|text| (name, text))
        })
        .collect()
}

/// JSON safe inside a `<script>` element: `<`, `>` and `&` as `\u` escapes, so no text of
/// a file can close the element.
pub fn script_json(value: &serde_json::Value) -> String {
    let text = serde_json::to_string(value).expect("JSON values serialise");
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The module as the page carries it: the element holding its base64, and the Worker's
/// source. Empty when `module_gz` is.
pub fn module_elements(module_gz: &[u8]) -> String {
    if module_gz.is_empty() {
        return String::new();
    }
    format!(
        "{MODULE_ELEMENT}{}</script>\n<script type=\"text/plain\" id=\"bl-worker\">{WORKER_JS}</script>\n",
        base64::engine::general_purpose::STANDARD.encode(module_gz)
    )
}

/// The "try it" section of a report page for `source` (the panel is built by the script
/// from the module's `describe`), or a comment saying why there is none.
pub fn panel_section(source: Option<&Source>, module_gz: &[u8]) -> String {
    let Some(source) = source else {
        return "<!-- try it: this report has no one analysis file to recompute (a compare of two files or of two report folders); each run's report has its own panel -->\n"
            .into();
    };
    if module_gz.is_empty() {
        // Why, in words that cannot close the comment.
        let why = crate::report::wasm::MISSING.replace("--", "- -");
        return format!("<!-- try it: this battlelab was built without its WebAssembly core ({why}; rustup target add wasm32-unknown-unknown, then rebuild), so the page cannot recompute -->\n");
    }
    format!(
        "<section id=\"tryit\" class=\"noprint\"><h2>Try it: change a setting, see the odds</h2>\n<p class=\"muted\">Change any value below: this page recomputes in your browser with battlelab's own code (exact where the run is exact, else the same seeded Monte Carlo as the command line; nothing leaves the page). The link in the address bar keeps your changes; <em>download</em> saves the edited file for <code>battlelab run</code>.</p>\n{}<div id=\"tryit-panel\" class=\"tryit\"><p class=\"muted\">Loading the calculator…</p></div>\n<script type=\"application/json\" id=\"tryit-data\">{}</script>\n{}</section>\n",
        source.scope.as_deref().map_or_else(String::new, |scope| format!(
            "<p id=\"tryit-scope\">{}</p>\n",
            crate::report::index::escape(scope)
        )),
        script_json(&source.json()),
        module_elements(module_gz)
    )
}

/// The panel's styles (the report page and the playground share them).
pub const STYLE: &str = r#"
.tryit fieldset{border:1px solid var(--line);border-radius:6px;margin:.6rem 0;padding:.4rem .8rem;min-width:0}
.tryit legend{font-weight:600;padding:0 .3rem}
.tryit .fields{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,15rem),1fr));gap:.5rem 1rem}
.tryit label{display:block;font-size:.9rem;min-width:0}
.tryit label .range{color:var(--muted);font-size:.85em}
.tryit input[type=text],.tryit select,.tryit textarea{font:inherit;font-size:.95rem;width:100%;max-width:100%;padding:.2rem .35rem;border:1px solid var(--line);border-radius:4px}
.tryit input.cell{width:4.5rem;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85rem}
.tryit .edited{background:#fff8c5}
td.live-edited{background:#fff8c5}
.live-note{background:#fff8c5;padding:.3rem .6rem;border-radius:4px}
.live-stale{color:#6a5300;font-style:italic;margin:.2rem 0}
.live-chart{margin:.6rem 0}
.tryit [aria-invalid=true]{border-color:#cf222e;outline:1px solid #cf222e}
.tryit .error{color:#cf222e;font-size:.88rem;white-space:pre-wrap;overflow-wrap:anywhere}
.tryit .buttons{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0}
.tryit button{font:inherit;font-size:.95rem;padding:.25rem .8rem;border:1px solid var(--line);border-radius:4px;background:var(--bg2);cursor:pointer}
.tryit progress{width:100%;max-width:24rem}
.tryit .note{color:var(--muted);font-size:.9rem}
.tryit .share{width:100%;font-size:.8rem}
.tryit svg{display:block;width:100%;height:auto;max-width:760px}
.tryit .headline{font-size:1.05rem;margin:.4rem 0}
.tryit td.p{text-align:right}
.tryit details{margin:.4rem 0}
"#;

/// The Worker: unpacks and instantiates the module, runs requests, and runs a Monte
/// Carlo job in steps (posting progress) until a newer request supersedes it.
const WORKER_JS: &str = r#"
'use strict';
var mod=null,ex=null,latest=0,enc=new TextEncoder(),dec=new TextDecoder();
// The call that reports progress (a long `value` or `compare`): its id, its total and
// when it last told the page.
var reporting=null;
function progress(done){
  var r=reporting,now=performance.now();
  if(!r||(done<r.total&&now-r.told<50))return;
  r.told=now;
  postMessage({type:'progress',id:r.id,done:done,blocks:r.total});
}
function imports(m){
  var o={};
  WebAssembly.Module.imports(m).forEach(function(i){
    o[i.module]=o[i.module]||{};
    if(i.kind!=='function')return;
    if(i.module==='env'&&i.name==='bl_progress')o.env.bl_progress=progress;
    else o[i.module][i.name]=function(){throw new Error('the module called '+i.module+'.'+i.name+', which the page does not provide');};
  });
  return o;
}
function instantiate(){ex=new WebAssembly.Instance(mod,imports(mod)).exports;}
async function load(b64){
  var bin=atob(b64),n=bin.length,bytes=new Uint8Array(n);
  for(var i=0;i<n;i++)bytes[i]=bin.charCodeAt(i);
  var stream=new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  var wasm=await new Response(stream).arrayBuffer();
  mod=await WebAssembly.compile(wasm);
  instantiate();
}
function call(req){
  try{
    var b=enc.encode(JSON.stringify(req));
    var p=ex.bl_alloc(b.length)>>>0;
    new Uint8Array(ex.memory.buffer,p,b.length).set(b);
    var n=ex.bl_call(p,b.length)>>>0;
    ex.bl_free(p,b.length);
    var r=ex.bl_response()>>>0;
    return JSON.parse(dec.decode(new Uint8Array(ex.memory.buffer,r,n)));
  }catch(e){
    // A panic aborts: the module keeps an error naming the bug (`bl_panic`); then a fresh
    // instance.
    var said=null;
    try{var k=ex.bl_panic?ex.bl_panic()>>>0:0;if(k)said=JSON.parse(dec.decode(new Uint8Array(ex.memory.buffer,ex.bl_response()>>>0,k)));}catch(_){}
    try{instantiate();}catch(_){}
    return said||{error:{message:'the calculator stopped on this input (a bug in battlelab: please report it with the file): '+(e&&e.message||e),file:null,line:null,key:null}};
  }
}
function pause(){return new Promise(function(r){setTimeout(r,0);});}
onmessage=async function(e){
  var m=e.data,t0=performance.now();
  try{
    if(m.type==='load'){await load(m.b64);postMessage({id:m.id,ms:performance.now()-t0});return;}
    if(!m.keep)latest=m.id;
    if(m.type==='call'){
      reporting=m.total?{id:m.id,total:m.total,told:0}:null;
      var r=call(m.req);
      reporting=null;
      postMessage({id:m.id,resp:r,ms:performance.now()-t0});return;
    }
    if(m.type==='simulate'){
      var req=Object.assign({},m.req,{op:'start'});
      var s=call(req);
      if(!s.ok){postMessage({id:m.id,resp:s,ms:performance.now()-t0});return;}
      var blocks=s.ok.blocks,done=0,k=1;
      postMessage({type:'progress',id:m.id,done:0,blocks:blocks});
      while(done<blocks){
        await pause();
        if(latest!==m.id){postMessage({id:m.id,cancelled:true});return;}
        var t=performance.now(),st=call({op:'step',blocks:k});
        if(!st.ok){postMessage({id:m.id,resp:st,ms:performance.now()-t0});return;}
        done=st.ok.done;
        var dt=performance.now()-t;
        if(dt<50)k*=2;else if(dt>200&&k>1)k=Math.max(1,k>>1);
        postMessage({type:'progress',id:m.id,done:done,blocks:blocks});
      }
      var f=call({op:'finish'});
      postMessage({id:m.id,resp:f,ms:performance.now()-t0});
    }
  }catch(err){postMessage({id:m.id,failed:String(err&&err.message||err)});}
};
"#;

/// What the report page and the playground share: `BL.Engine` (the Worker's client),
/// `BL.results` (a results table and the headline), `BL.chart` (outcome probabilities per
/// run as inline SVG), `BL.el` (elements from text, never from markup) and
/// `BL.overflow` (what sticks out of a phone's width).
pub const CLIENT_JS: &str = r#"
var BL=(function(){
  'use strict';
  function el(tag,attrs,kids){
    var e=document.createElement(tag);
    if(attrs)Object.keys(attrs).forEach(function(k){
      var v=attrs[k];
      if(v===null||v===undefined||v===false)return;
      if(k==='text')e.textContent=v;else if(k.slice(0,2)==='on')e.addEventListener(k.slice(2),v);else e.setAttribute(k,v===true?'':String(v));
    });
    (kids||[]).forEach(function(c){if(c!==null&&c!==undefined)e.appendChild(typeof c==='string'?document.createTextNode(c):c);});
    return e;
  }
  function Engine(){
    var self=this;
    this.pending={};this.progress={};this.next=1;
    var src=document.getElementById('bl-worker').textContent;
    this.worker=new Worker(URL.createObjectURL(new Blob([src],{type:'text/javascript'})));
    this.worker.onmessage=function(e){
      var m=e.data;
      if(m.type==='progress'){var f=self.progress[m.id];if(f)f(m.done,m.blocks);return;}
      var p=self.pending[m.id];
      if(!p)return;
      delete self.pending[m.id];delete self.progress[m.id];
      if(m.failed)p.reject(new Error(m.failed));else p.resolve(m);
    };
    this.worker.onerror=function(e){
      e.preventDefault();
      Object.keys(self.pending).forEach(function(id){self.pending[id].reject(new Error('the calculator stopped: '+e.message));});
      self.pending={};
    };
    this.ready=this.send({type:'load',b64:document.getElementById('bl-module').textContent.trim()});
  }
  Engine.prototype.send=function(msg,onprogress){
    var self=this,id=this.next++;
    msg.id=id;
    return new Promise(function(resolve,reject){
      self.pending[id]={resolve:resolve,reject:reject};
      if(onprogress)self.progress[id]=onprogress;
      self.worker.postMessage(msg);
    });
  };
  // A request; `keep`: does not supersede a running Monte Carlo job (a download). With
  // `onprogress` and `total` (the trials it will simulate), the module reports the
  // trials done while it runs (`onprogress(done, total)`).
  Engine.prototype.call=function(req,keep,onprogress,total){
    var self=this;
    return this.ready.then(function(){return self.send({type:'call',req:req,keep:!!keep,total:onprogress&&total||0},onprogress);});
  };
  // A Monte Carlo job in steps (start, step…, finish); resolves {cancelled:true} when a
  // newer request superseded it.
  Engine.prototype.simulate=function(req,onprogress){
    var self=this;
    return this.ready.then(function(){return self.send({type:'simulate',req:req},onprogress);});
  };
  function fmt(p){return typeof p==='number'?p.toFixed(4):'';}
  // An outcome's probability as shown: exact where the run is exact, else simulated.
  function prob(o){return typeof o.exact==='number'?o.exact:o.probability;}
  function runLabel(run,axes,variants){
    var parts=[];
    if(variants>1)parts.push(run.variant);
    (run.coordinates||[]).forEach(function(c,i){parts.push((axes&&axes[i]?axes[i]+' ':'')+c);});
    return parts.length?parts.join(', '):'the run';
  }
  function variantCount(runs){var s={};runs.forEach(function(r){s[r.variant]=1;});return Object.keys(s).length;}
  function outcomeNames(runs){
    var names=[];
    runs.forEach(function(r){(r.outcomes||[]).forEach(function(o){if(names.indexOf(o.name)<0)names.push(o.name);});});
    return names;
  }
  // The headline (`{name, values: one per run}`) in words: each run's value when they
  // are few, else the range over the runs.
  function headlineLines(h,runs,axes){
    if(!h||!h.name||!Array.isArray(h.values)||!h.values.length)return [];
    var v=h.values,nv=variantCount(runs);
    if(v.length===1)return [h.name+' = '+fmt(v[0])];
    if(v.length<=4)return [h.name+': '+v.map(function(x,i){return (runs[i]?runLabel(runs[i],axes,nv)+' ':'')+fmt(x);}).join(' · ')];
    var nums=v.filter(function(x){return typeof x==='number';});
    return [h.name+': from '+fmt(Math.min.apply(null,nums))+' to '+fmt(Math.max.apply(null,nums))+' over the '+v.length+' runs (every run below)'];
  }
  // The results of a `run`/`finish` answer: the headline, then a table of runs ×
  // outcomes. Each cell carries its numbers as data attributes.
  function results(ok,axes){
    var runs=ok.runs||[],names=outcomeNames(runs),nv=variantCount(runs);
    var box=el('div',{'class':'results'});
    headlineLines(ok.headline,runs,axes).forEach(function(l){box.appendChild(el('p',{'class':'headline',text:l}));});
    var head=el('tr',{},[el('th',{text:'run'}),el('th',{text:'trials'})].concat(names.map(function(n){return el('th',{text:'P('+n+')'});})));
    var body=el('tbody');
    runs.forEach(function(r,i){
      var tr=el('tr',{'data-run':i},[el('td',{text:runLabel(r,axes,nv)}),el('td',{'class':'p',text:r.exact&&!r.trials?'exact':String(r.trials)+(r.exact?' + exact':'')})]);
      names.forEach(function(n){
        var o=(r.outcomes||[]).filter(function(o){return o.name===n;})[0];
        if(!o){tr.appendChild(el('td',{'class':'p',text:'–'}));return;}
        var p=prob(o),text=o.fraction?o.fraction+' ('+fmt(p)+')':fmt(p);
        var title=o.count!==null&&o.count!==undefined?'simulated: '+o.count+' of '+r.trials+' ('+fmt(o.probability)+')':'';
        if(o.ci)title+=(title?'; ':'')+'95% interval '+fmt(o.ci[0])+'–'+fmt(o.ci[1]);
        tr.appendChild(el('td',{'class':'p',text:text,title:title||null,'data-outcome':n,'data-p':p,'data-count':o.count===null||o.count===undefined?null:o.count,'data-fraction':o.fraction||null}));
      });
      body.appendChild(tr);
    });
    box.appendChild(el('div',{'class':'scroll'},[el('table',{},[el('thead',{},[head]),body])]));
    return box;
  }
  var COLOURS=['#0b5cad','#cf222e','#1a7f37','#9a6700','#8250df','#bf3989','#57606a','#0a7ea4','#e16f24','#116329'];
  // The SVG namespace: a name, never fetched (written in two parts so that no URL
  // appears in the page's text, which tests/browser.rs holds free of any).
  var SVG='http:'+'//www.w3.org/2000/svg';
  function svg(tag,attrs,text){
    var e=document.createElementNS(SVG,tag);
    Object.keys(attrs||{}).forEach(function(k){e.setAttribute(k,String(attrs[k]));});
    if(text!==undefined)e.textContent=text;
    return e;
  }
  // Outcome probabilities per run: one stacked bar a run, drawn in the page.
  function chart(ok,axes){
    var runs=(ok.runs||[]).slice(0,200),names=outcomeNames(runs),nv=variantCount(runs);
    var W=600,label=190,bar=W-label-10,row=18,legendRows=Math.ceil(names.length/3),top=8+legendRows*18+6;
    var H=top+runs.length*row+22;
    var s=svg('svg',{viewBox:'0 0 '+W+' '+H,role:'img','aria-label':'outcome probabilities per run','font-family':'system-ui,sans-serif','font-size':'11'});
    names.forEach(function(n,i){
      var x=(i%3)*(W/3),y=8+Math.floor(i/3)*18;
      s.appendChild(svg('rect',{x:x,y:y,width:12,height:12,fill:COLOURS[i%COLOURS.length]}));
      s.appendChild(svg('text',{x:x+16,y:y+10},n.length>28?n.slice(0,27)+'…':n));
    });
    runs.forEach(function(r,j){
      var y=top+j*row,x=label,name=runLabel(r,axes,nv);
      s.appendChild(svg('text',{x:label-6,y:y+12,'text-anchor':'end'},name.length>30?name.slice(0,29)+'…':name));
      names.forEach(function(n,i){
        var o=(r.outcomes||[]).filter(function(o){return o.name===n;})[0];
        var w=o?Math.max(0,prob(o)||0)*bar:0;
        if(w<=0)return;
        var rect=svg('rect',{x:x.toFixed(2),y:y+2,width:w.toFixed(2),height:row-5,fill:COLOURS[i%COLOURS.length]});
        rect.appendChild(svg('title',{},name+': P('+n+') = '+(o.fraction||fmt(prob(o)))));
        s.appendChild(rect);
        x+=w;
      });
    });
    var axisY=top+runs.length*row+4;
    [0,0.25,0.5,0.75,1].forEach(function(t){
      var x=label+t*bar;
      s.appendChild(svg('line',{x1:x,x2:x,y1:top,y2:axisY,stroke:'#d0d7de','stroke-width':0.5}));
      s.appendChild(svg('text',{x:x,y:axisY+12,'text-anchor':'middle'},String(t)));
    });
    return s;
  }
  // What reaches past `limit` px (nothing may, except inside a box that scrolls).
  function overflow(limit){
    var fail=[],sw=document.documentElement.scrollWidth,w=window.innerWidth;
    if(sw>w)fail.push('page overflows: scrollWidth '+sw+' > innerWidth '+w);
    (function walk(e){
      for(var c=e.firstElementChild;c;c=c.nextElementSibling){
        var r=c.getBoundingClientRect().right;
        if(r>limit+0.5)fail.push('sticks out to '+Math.round(r)+' px: <'+c.tagName.toLowerCase()+(c.id?' id='+c.id:'')+'>');
        if(getComputedStyle(c).overflowX==='visible')walk(c);
      }
    })(document.body);
    return fail;
  }
  // The numbers shown in `box`'s results table: [{run, cells:[{outcome,text,p,count,fraction}]}].
  function shown(box){
    return Array.prototype.slice.call(box.querySelectorAll('tr[data-run]')).map(function(tr){
      return {run:tr.firstChild.textContent,trials:tr.children[1].textContent,cells:Array.prototype.slice.call(tr.querySelectorAll('td[data-outcome]')).map(function(td){
        return {outcome:td.getAttribute('data-outcome'),text:td.textContent,p:parseFloat(td.getAttribute('data-p')),p_text:td.getAttribute('data-p'),count:td.hasAttribute('data-count')?Number(td.getAttribute('data-count')):null,fraction:td.getAttribute('data-fraction')};
      })};
    });
  }
  // Saves `files` ({name: text}) through Blob links in `box`, each clicked once (not
  // under a self-test, which reads the files instead).
  function download(box,files,quiet){
    box.textContent='';
    Object.keys(files).forEach(function(name){
      var base=name.split(/[\/\\]/).pop()||'analysis.toml';
      var url=URL.createObjectURL(new Blob([files[name]],{type:'application/toml'}));
      var a=el('a',{href:url,download:base,text:'save '+base});
      box.appendChild(el('div',{},[a]));
      if(!quiet)a.click();
    });
  }
  return {el:el,Engine:Engine,results:results,chart:chart,overflow:overflow,shown:shown,download:download,runLabel:runLabel};
})();
"#;

/// The report page's panel: builds the fields from `describe`, recomputes on a change
/// (debounced), keeps the edits in the hash, resets, downloads, and runs the self-test.
pub const PANEL_JS: &str = r#"
(function(){
  'use strict';
  var root=document.getElementById('tryit-panel');
  if(!root||typeof BL==='undefined')return;
  var el=BL.el,data=JSON.parse(document.getElementById('tryit-data').textContent),engine;
  try{engine=new BL.Engine();}catch(e){root.textContent='This browser cannot run the calculator here: '+e.message;return;}
  var fields={},order=[],state={edits:{},seed:null,trials:null};
  var base=null,current=null,timer=null,busy=true,generation=0,lastChanged=null,downloaded=null;
  var timing={module_ms:null,first_result_ms:null,last_ms:null,worker_ms:null},lastKind=null;
  var out=el('div',{'class':'out'}),chartBox=el('div',{'class':'chart'}),statusLine=el('p',{'class':'note',role:'status'});
  var progress=el('progress',{max:1,value:0,hidden:true}),panelError=el('div',{'class':'error',role:'alert'});
  var shareInput=el('input',{type:'text',readonly:true,'class':'share','aria-label':'link to these settings'}),downloads=el('div',{'class':'downloads'});
  var hash=location.hash,selftest=null,m=/^#tryit-selftest=(.*)$/.exec(hash);
  if(m){try{selftest=JSON.parse(decodeURIComponent(m[1]));}catch(e){selftest={payload_error:String(e)};}}
  function request(op){return {op:op,analysis:data.analysis,files:data.files,edits:state.edits};}
  function show(v){return typeof v==='string'?v:JSON.stringify(v);}
  // A key of type "string" takes the text as typed; any other, the value the text reads
  // as in JSON (3, true, [1, 2], {"from": 1, "to": 6}), else the text.
  function isText(s){return s&&s.type==='string';}
  function parseValue(text,s){
    if(isText(s))return text;
    try{return JSON.parse(text);}catch(e){return text;}
  }
  function range(s){
    var has=function(v){return v!==null&&v!==undefined;};
    if(Array.isArray(s.allowed)&&s.allowed.length)return '';
    if(has(s.min)&&has(s.max))return '('+s.min+'–'+s.max+')';
    if(has(s.min))return '(≥ '+s.min+')';
    if(has(s.max))return '(≤ '+s.max+')';
    return s.type?'('+s.type+')':'';
  }
  function register(path,input,err,original,setting,onchange){
    fields[path]={path:path,input:input,error:err,original:original,setting:setting};
    order.push(path);
    var f=function(){lastChanged=path;onchange();};
    input.addEventListener('input',f);
    input.addEventListener('change',f);
  }
  function settingField(s,strip){
    var id='tryit-f'+order.length,input,val=show(s.value);
    if(Array.isArray(s.allowed)&&s.allowed.length){
      var opts=s.allowed.map(show);
      if(opts.indexOf(val)<0)opts.unshift(val);
      input=el('select',{id:id},opts.map(function(a){return el('option',{value:a,text:a});}));
    }else if(s.type==='boolean'){
      input=el('select',{id:id},[el('option',{value:'true',text:'true'}),el('option',{value:'false',text:'false'})]);
    }else{
      input=el('input',{type:'text',id:id,inputmode:s.type==='integer'?'numeric':null,spellcheck:'false',autocomplete:'off'});
    }
    input.value=val;
    var err=el('div',{'class':'error',role:'alert'});
    var name=strip&&s.path.indexOf(strip)===0?s.path.slice(strip.length):s.path;
    var box=el('div',{'class':'field','data-path':s.path},[el('label',{'for':id,title:s.doc||null},[name+' ',el('span',{'class':'range',text:range(s)})]),input,err]);
    register(s.path,input,err,val,s,function(){
      if(input.value===val)delete state.edits[s.path];else state.edits[s.path]=parseValue(input.value,s);
      input.classList.toggle('edited',input.value!==val);
      schedule();
    });
    return box;
  }
  // A rules file's table: `cells` holds each column as the file writes it, a string of
  // results (one a row: a grid of inputs, edited back into the string) or a table of
  // rows (one input holding it as JSON). A column's edit is `<path>."<column>"`.
  function tableField(t){
    var err=el('div',{'class':'error',role:'alert'}),cols=t.columns||[],cells=t.cells||[];
    var split=cells.map(function(c){return typeof c==='string'?c.trim().split(/\s+/):null;});
    var rows=Math.max.apply(null,[0].concat(split.map(function(x){return x?x.length:1;})));
    var head=el('tr',{},[el('th',{text:'row'})].concat(cols.map(function(c){return el('th',{text:show(c)});})));
    var body=el('tbody'),inputs=cols.map(function(){return [];});
    for(var r=0;r<rows;r++){
      var tr=el('tr',{},[el('th',{text:String(r+1)})]);
      cols.forEach(function(c,k){
        if(!split[k]){
          if(r===0){var i=el('input',{type:'text','class':'cell json','aria-label':t.name+' '+show(c),spellcheck:'false',autocomplete:'off'});i.value=show(cells[k]);inputs[k].push(i);tr.appendChild(el('td',{rowspan:rows},[i]));}
          return;
        }
        var cell=split[k][r];
        if(cell===undefined){tr.appendChild(el('td'));return;}
        var input=el('input',{type:'text','class':'cell','aria-label':t.name+' '+show(c)+', row '+(r+1),spellcheck:'false',autocomplete:'off'});
        input.value=cell;
        inputs[k].push(input);
        tr.appendChild(el('td',{},[input]));
      });
      body.appendChild(tr);
    }
    cols.forEach(function(c,k){
      var path=t.path+'.'+JSON.stringify(String(c)),orig=show(cells[k]),list=inputs[k];
      var value=function(){return split[k]?list.map(function(i){return i.value.trim();}).join(' '):parseValue(list[0].value,null);};
      var onchange=function(){
        var now=value();
        if(show(now)===orig||(split[k]&&now===split[k].join(' ')))delete state.edits[path];else state.edits[path]=now;
        list.forEach(function(i,r){i.classList.toggle('edited',split[k]?i.value.trim()!==split[k][r]:i.value!==orig);});
        schedule();
      };
      fields[path]={path:path,input:list[0],inputs:list,error:err,original:orig,setting:null,split:split[k]};
      order.push(path);
      list.forEach(function(i){
        var f=function(){lastChanged=path;onchange();};
        i.addEventListener('input',f);i.addEventListener('change',f);
      });
    });
    fields[t.path]={path:t.path,input:null,error:err,setting:null};
    order.push(t.path);
    return el('fieldset',{},[el('legend',{text:'Table: '+(t.means||t.name||t.path)}),el('div',{'class':'scroll'},[el('table',{},[el('thead',{},[head]),body])]),err]);
  }
  function runField(key,label,value){
    var id='tryit-'+key,input=el('input',{type:'text',id:id,inputmode:'numeric',spellcheck:'false',autocomplete:'off'}),err=el('div',{'class':'error',role:'alert'});
    input.value=String(value);
    register('run:'+key,input,err,String(value),null,function(){
      var v=input.value.trim();
      state[key]=v===String(value)?null:(/^\d+$/.test(v)&&Number(v)<=Number.MAX_SAFE_INTEGER?Number(v):v);
      input.classList.toggle('edited',state[key]!==null);
      schedule();
    });
    return el('div',{'class':'field'},[el('label',{'for':id},[label]),input,err]);
  }
  function build(d){
    root.textContent='';
    var groups=[],byName={};
    function group(name){if(!byName[name]){byName[name]={name:name,items:[]};groups.push(byName[name]);}return byName[name];}
    (d.settings||[]).forEach(function(s){
      if(s.path==='seed'||s.path==='trials')return;
      var g=s.swept?group('Swept values'):s.side?group('Side: '+s.side):group('The battle');
      g.items.push(settingField(s,s.side&&!s.swept?'sides.'+s.side+'.':null));
    });
    groups.forEach(function(g){root.appendChild(el('fieldset',{},[el('legend',{text:g.name}),el('div',{'class':'fields'},g.items)]));});
    (d.tables||[]).forEach(function(t){root.appendChild(tableField(t));});
    root.appendChild(el('fieldset',{},[el('legend',{text:'Run'}),el('div',{'class':'fields'},[runField('seed','seed (the same seed gives the same counts as battlelab run)',d.seed),runField('trials','trials per run (where a run is not exact)',d.trials)])]));
    var reset=el('button',{type:'button',text:'reset',onclick:function(){resetAll();}});
    var save=el('button',{type:'button',text:'download',onclick:function(){downloadEdited();}});
    root.appendChild(el('div',{'class':'buttons'},[reset,save,el('span',{'class':'note',text:'link to these settings:'})]));
    root.appendChild(shareInput);
    root.appendChild(downloads);
    root.appendChild(panelError);
    root.appendChild(progress);
    root.appendChild(statusLine);
    root.appendChild(out);
    root.appendChild(chartBox);
  }
  function shareText(){
    var s={};
    if(Object.keys(state.edits).length)s.edits=state.edits;
    if(state.seed!==null)s.seed=state.seed;
    if(state.trials!==null)s.trials=state.trials;
    return Object.keys(s).length?JSON.stringify(s):'';
  }
  function updateHash(){
    var t=shareText(),url=location.href.replace(/#.*$/,'')+(t?'#tryit='+encodeURIComponent(t):'');
    try{history.replaceState(null,'',url);}catch(e){}
    shareInput.value=url;
  }
  function applyShared(text){
    var s;
    try{s=JSON.parse(text);}catch(e){panelError.textContent='The link\'s settings could not be read ('+e.message+'); showing the file as written.';return;}
    Object.keys(s.edits||{}).forEach(function(p){
      var v=s.edits[p],f=fields[p];
      state.edits[p]=v;
      if(f&&f.inputs&&f.split&&typeof v==='string'){var w=v.trim().split(/\s+/);f.inputs.forEach(function(i,r){if(r<w.length){i.value=w[r];i.classList.toggle('edited',w[r]!==f.split[r]);}});}
      else if(f&&f.inputs){f.inputs[0].value=show(v);f.inputs[0].classList.add('edited');}
      else if(f&&f.input){f.input.value=show(v);f.input.classList.add('edited');}
    });
    ['seed','trials'].forEach(function(k){
      if(s[k]===undefined||s[k]===null)return;
      state[k]=s[k];
      var f=fields['run:'+k];
      if(f){f.input.value=String(s[k]);f.input.classList.add('edited');}
    });
  }
  function resetAll(){
    state={edits:{},seed:null,trials:null};
    order.forEach(function(p){
      var f=fields[p];
      if(f.inputs){f.inputs.forEach(function(i,r){i.value=f.split?f.split[r]:f.original;i.classList.remove('edited');});}
      else if(f.input){f.input.value=f.original;f.input.classList.remove('edited');}
    });
    downloads.textContent='';
    schedule(0);
  }
  // The edited files, saved side by side: a rules file named by a path (../rules/x.toml)
  // is saved under its own name beside the analysis, and the analysis names it so.
  function downloadEdited(){
    var req=request('download'),names=Object.keys(data.files||{});
    if(data.companion_key&&names.length===1){
      var n=names[0],base=n.split(/[\/\\]/).pop(),own=data.analysis.name.split(/[\/\\]/).pop();
      if(base===own)base=base.replace(/\.toml$/,'')+'.rules.toml';
      if(base!==n){
        req.files={};req.files[base]=data.files[n];
        req.edits=Object.assign({},state.edits);req.edits[data.companion_key]=base;
      }
    }
    return engine.call(req,true).then(function(r){
      if(r.resp.error){fail(r.resp.error);return null;}
      var files=r.resp.ok.files||{};
      BL.download(downloads,files,!!selftest);
      return files;
    }).catch(function(e){panelError.textContent=String(e.message||e);return null;});
  }
  function schedule(delay){
    if(timer)clearTimeout(timer);
    timer=setTimeout(function(){timer=null;recompute();},delay===undefined?250:delay);
    updateHash();
  }
  function clearErrors(){
    order.forEach(function(p){
      var f=fields[p];
      f.error.textContent='';
      (f.inputs||(f.input?[f.input]:[])).forEach(function(i){i.removeAttribute('aria-invalid');});
    });
    panelError.textContent='';
  }
  function fieldOf(key){
    if(key==='seed'||key==='trials')key='run:'+key;
    if(key&&fields[key])return fields[key];
    var best=null;
    if(key)order.forEach(function(p){
      if((key.indexOf(p+'.')===0||p.indexOf(key+'.')===0)&&(!best||p.length>best.length))best=p;
    });
    if(best)return fields[best];
    return lastChanged&&fields[lastChanged]?fields[lastChanged]:null;
  }
  function fail(err){
    var f=fieldOf(err.key);
    if(f){
      f.error.textContent=err.message;
      (f.inputs||(f.input?[f.input]:[])).forEach(function(i){i.setAttribute('aria-invalid','true');});
    }else panelError.textContent=err.message;
    progress.hidden=true;
    out.textContent='';chartBox.textContent='';
    showLive(null);
    showPrices(null,null);
    statusLine.textContent='not recomputed: the value marked is refused, as battlelab run would refuse it';
  }
  function draw(ok){
    out.textContent='';
    out.appendChild(BL.results(ok,current&&current.axes));
    chartBox.textContent='';
    chartBox.appendChild(BL.chart(ok,current&&current.axes));
    showLive(ok);
  }
  // The page's own rulebook tables and charts. The run marked some cells of tables.md
  // live (data.live: which run, which outcomes or metric, how printed): with edits in
  // force they are recomputed from the panel's results, printed as the command line
  // prints them, and marked; the charts section opens with the panel's chart. Without
  // edits, or when an edit is refused, the page shows the file's numbers again.
  // Tables printed from the rules as read (data.live.printed: a rules file's tables as
  // printed and as modified, its result codes; a built-in system's CRT or d6 table as the
  // file gives it) are reprinted after an edit from the run response's `printed` (the
  // command line's text for the edited file), matched by key. Any other table with no
  // recomputed cell stays the file's: with edits in force it says so above it.
  var live=[],liveNote=null,liveChart=null,staticTables=[],printedTables=[];
  var printing={reprinted:null,differ:null,extra:null,edit_to_tables_ms:null},editStart=null;
  (function(){
    var L=data.live,section=document.getElementById('tables');
    if(!L||!section)return;
    var tables=section.querySelectorAll('table');
    if(tables.length!==L.tables)return;
    L.cells.forEach(function(c){
      var t=tables[c.table],row=t&&t.tBodies[0]&&t.tBodies[0].rows[c.row],td=row&&row.cells[c.column];
      if(td)live.push({cell:c,td:td,original:mdText(td)});
    });
    var printedAt={};
    (L.printed||[]).forEach(function(p){printedAt[p.table]=p;});
    Array.prototype.forEach.call(tables,function(t,i){
      if(L.cells.some(function(c){return c.table===i;}))return;
      var at=t.closest('.scroll')||t,P=printedAt[i];
      if(P&&t.tBodies[0]){
        var differs=el('p',{'class':'live-stale',role:'note',hidden:true,text:'The edited file prints this table differently: battlelab run on the downloaded file prints it.'});
        at.parentNode.insertBefore(differs,at);
        var after=at.nextElementSibling,note=P.note&&after&&after.tagName==='P'&&after.textContent===P.note?after:null;
        printedTables.push({index:i,key:P.key,table:t,original:t.tBodies[0].cloneNode(true),differs:differs,note:note,noteText:note?note.textContent:null,
          header:Array.prototype.map.call(t.querySelectorAll('thead th'),function(th){return th.textContent;}),
          align:Array.prototype.map.call(t.querySelectorAll('thead th'),function(th){return th.getAttribute('class');})});
        return;
      }
      var stale=el('p',{'class':'live-stale',role:'note',hidden:true,text:'Not recomputed with the panel\'s edits: the file\'s table (battlelab run on the edited file prints it anew).'});
      at.parentNode.insertBefore(stale,at);
      staticTables.push(stale);
    });
    liveNote=el('p',{'class':'live-note',role:'status',hidden:true});
    var h=section.querySelector('h2');
    section.insertBefore(liveNote,h?h.nextSibling:section.firstChild);
  })();
  // A cell's text as tables.md prints it: a cell in bold (a derived table's best) as
  // **text**; and the same text put back into a cell.
  function mdText(td){var b=td.querySelector('strong');return b&&b.textContent===td.textContent?'**'+td.textContent+'**':td.textContent;}
  function setMd(td,t){
    var m=/^\*\*(.+)\*\*$/.exec(t);
    td.textContent=m?'':t;
    if(m)td.appendChild(el('strong',{text:m[1]}));
  }
  function editing(){return Object.keys(state.edits).length>0||state.seed!==null||state.trials!==null;}
  // x printed with d decimals as Rust's format! does: from its exact decimal expansion,
  // a tie to the even digit (toFixed would round it up).
  function fixed(x,d){
    if(x<0)return '-'+fixed(-x,d);
    var s=x.toFixed(Math.min(100,d+40)),dot=s.indexOf('.'),digits=s.slice(0,dot+1+d).replace('.',''),rest=s.slice(dot+1+d);
    var up=rest[0]>'5'||(rest[0]==='5'&&(/[1-9]/.test(rest.slice(1))||(+digits[digits.length-1])%2===1));
    if(up){
      var a=digits.split(''),i=a.length-1;
      while(i>=0&&a[i]==='9'){a[i]='0';i--;}
      if(i<0)a.unshift('1');else a[i]=String(+a[i]+1);
      digits=a.join('');
    }
    return d>0?digits.slice(0,digits.length-d)+'.'+digits.slice(digits.length-d):digits;
  }
  function liveText(c,run,ok){
    if(c.source)return run.exact?'exact':'simulated';
    if(c.derived){
      // A number the system derives from several runs (the run response's `derived`,
      // computed by the command line's own code): only printed here.
      var d=null;(ok.derived||[]).forEach(function(x){if(x.key===c.derived)d=x;});
      if(!d||(typeof d.text!=='string'&&!d.infinite&&typeof d.value!=='number'))return '—';
      var t=typeof d.text==='string'?d.text:d.infinite?'∞':c.format==='percent'?fixed(d.value*100,c.decimals)+'%':c.format==='signed'?(d.value<0||Object.is(d.value,-0)?'-':'+')+fixed(Math.abs(d.value),c.decimals):fixed(d.value,c.decimals);
      return d.best?'**'+t+'**':t;
    }
    if(c.tenths){
      var k=-1;run.outcomes.forEach(function(o,i){if(o.name===c.tenths)k=i;});
      // A table whose columns are the outcomes its runs reach: when the edited runs reach
      // others, the command line prints other columns.
      if(c.of&&reached[JSON.stringify(c.of)]!==JSON.stringify(c.of.slice().sort()))return '—';
      return k<0||!run.tenths?'—':Math.floor(run.tenths[k]/10)+'.'+(run.tenths[k]%10);
    }
    if(c.chance){
      // An edit that brings in or takes away an outcome gives the table other columns.
      var names=run.outcomes.map(function(o){return o.name;});
      if(JSON.stringify(names)!==JSON.stringify(c.of))return '—';
      var j=names.indexOf(c.chance);
      return j<0||!run.chances?'—':run.chances[j];
    }
    if(c.expected){
      var e=null;(run.expected||[]).forEach(function(x){if(x.name===c.expected)e=x;});
      return e?e.fraction+' ('+fixed(e.value,c.decimals)+')':'—';
    }
    var v=null;
    if(c.outcomes){v=0;run.outcomes.forEach(function(o){if(c.outcomes.indexOf(o.name)>=0)v+=(run.exact?o.exact:o.probability);});}
    else run.distributions.forEach(function(d){if(d.metric===c.mean)v=typeof d.exact_mean==='number'?d.exact_mean:d.mean;});
    if(typeof v!=='number'||!isFinite(v))return '—';
    return c.format==='percent'?fixed(v*100,c.decimals)+'%':fixed(v,c.decimals);
  }
  // The outcomes reached (by the response's own numbers) by the runs of the cells that
  // share each list of columns `of`, sorted, as JSON.
  var reached={};
  function runOf(ok,c){
    var key=data.live.runs[c.run],run=null;
    ok.runs.forEach(function(r){if(!run&&key&&r.variant===key.variant&&JSON.stringify(r.coordinates)===JSON.stringify(key.coordinates))run=r;});
    return run;
  }
  function showLive(ok){
    var on=!!ok&&editing();
    if(liveChart){liveChart.remove();liveChart=null;}
    reached={};
    if(on){
      var names={};
      live.forEach(function(x){
        var c=x.cell,run=c.tenths&&c.of?runOf(ok,c):null,k=JSON.stringify(c.of);
        if(!run)return;
        names[k]=names[k]||{};
        run.outcomes.forEach(function(o){if(run.exact?o.exact>0:o.count>0)names[k][o.name]=true;});
      });
      Object.keys(names).forEach(function(k){reached[k]=JSON.stringify(Object.keys(names[k]).sort());});
    }
    live.forEach(function(x){
      if(!on){setMd(x.td,x.original);x.td.classList.remove('live-edited');x.td.removeAttribute('title');return;}
      var run=runOf(ok,x.cell);
      setMd(x.td,run?liveText(x.cell,run,ok):'—');
      x.td.classList.add('live-edited');
      x.td.title=!run?'this run is not in the edited analysis':x.td.textContent==='—'?'the edit changes this table\'s columns: battlelab run on the edited file prints it':'recomputed with the panel\'s edits';
    });
    staticTables.forEach(function(n){n.hidden=!on;});
    var reprinted=showPrinted(on?ok:null);
    if(liveNote){
      liveNote.hidden=!on;
      liveNote.textContent=on?'With the panel\'s edits: the '+live.length+' highlighted cells are recomputed ('+(ok.runs.every(function(r){return r.exact;})?'exact':'simulated')+')'+reprinted+'; the rest are the file\'s. Reset returns the file\'s numbers.':'';
    }
    var charts=document.getElementById('charts');
    if(on&&charts){
      var h=charts.querySelector('h2');
      liveChart=el('figure',{'class':'live-chart'},[el('figcaption',{text:'How the battle ends, with the panel\'s edits (the charts below are the file\'s)'}),BL.chart(ok,current&&current.axes)]);
      charts.insertBefore(liveChart,h?h.nextSibling:charts.firstChild);
    }
  }
  // The printed tables with the module's (`ok.printed`, null: the file's): a page table
  // whose key, title and header the edited file prints gets its rows and the note under
  // it, marked; one the edited file prints otherwise (an edit split the runs into other
  // groups, or gave a table other columns) keeps the file's text under a note saying so.
  // Returns the words the live note adds.
  function showPrinted(ok){
    var fresh={},matched={},reprinted=0,differ=0;
    if(ok)(ok.printed||[]).forEach(function(t){fresh[t.key]=t;});
    printedTables.forEach(function(p){
      var t=ok?fresh[p.key]:null;
      var fits=!!t&&JSON.stringify(t.header)===JSON.stringify(p.header)&&(!p.note||typeof t.note==='string');
      var body;
      if(fits){
        matched[p.key]=true;reprinted++;
        body=el('tbody');
        t.rows.forEach(function(r){body.appendChild(el('tr',{},r.map(function(c,i){
          var a=p.align[i];
          return el('td',{'class':(a?a+' ':'')+'live-edited'},inline(c));
        })));});
        if(p.note){p.note.textContent='';inline(t.note).forEach(function(x){p.note.appendChild(typeof x==='string'?document.createTextNode(x):x);});p.note.classList.add('live-edited');}
      }else{
        body=p.original.cloneNode(true);
        if(p.note){p.note.textContent=p.noteText;p.note.classList.remove('live-edited');}
        if(ok)differ++;
      }
      p.table.replaceChild(body,p.table.tBodies[0]);
      p.differs.hidden=!ok||fits;
    });
    var extra=ok?(ok.printed||[]).filter(function(t){return !matched[t.key];}).length:0;
    printing.reprinted=ok?reprinted:null;printing.differ=ok?differ:null;printing.extra=ok?extra:null;
    if(ok&&editStart!==null)printing.edit_to_tables_ms=performance.now()-editStart;
    if(!ok||!printedTables.length)return '';
    return ', and the '+reprinted+' printed tables are reprinted as battlelab run prints them for the edited file'+(differ?'; it prints '+differ+' of this page\'s tables differently (each says so above it)':'')+(extra?'; it prints '+extra+' more tables this page does not show (battlelab run on the downloaded file prints them)':'');
  }
  // A value page's prices (data.reprice: what `battlelab value` was asked). With edits in
  // force the module reprices the edited file with the CLI's pricing: exact at once where
  // every arm is exact, else the command line's seeded Monte Carlo when it is at most
  // PAGE_BATTLES battles; each table of the answer gets the module's rows, the text
  // tables.md prints. Without edits, or when an edit is refused, the file's prices.
  var priced=[],pricedNote=null,pricing={kind:null,ms:null,edit_to_prices_ms:null,arms:null,trials:null,progress:null},PAGE_BATTLES=2e7;
  (function(){
    var section=document.getElementById('tables');
    if(!data.reprice||!section)return;
    Array.prototype.forEach.call(section.querySelectorAll('table'),function(t){
      if(t.tBodies[0])priced.push({table:t,original:t.tBodies[0].cloneNode(true)});
    });
    pricedNote=el('p',{'class':'live-note',role:'status',hidden:true});
    var h=section.querySelector('h2');
    section.insertBefore(pricedNote,h?h.nextSibling:section.firstChild);
  })();
  function showPrices(ok,note){
    var tables=ok&&ok.tables&&ok.tables.length===priced.length?ok.tables:null;
    priced.forEach(function(p,i){
      var fresh;
      if(!tables)fresh=p.original.cloneNode(true);
      else{
        fresh=el('tbody');
        tables[i].rows.forEach(function(r){fresh.appendChild(el('tr',{},r.map(function(c){return el('td',{'class':'live-edited',text:c});})));});
      }
      p.table.replaceChild(fresh,p.table.tBodies[0]);
    });
    if(pricedNote){pricedNote.hidden=!note;pricedNote.textContent=note||'';}
  }
  // The progress bar of one long call (a simulated pricing or comparison): `what` is the
  // status line's text; `record` keeps the last report for the self-test.
  function showProgress(gen,what,record){
    record.progress=null;
    return function(done,total){
      if(gen!==generation)return;
      progress.hidden=false;progress.max=total;progress.value=done;
      record.progress={done:done,total:total};
      statusLine.textContent=what+': '+done+' of '+total+' battles';
    };
  }
  function reprice(gen,t0){
    if(!data.reprice||!priced.length)return null;
    if(!editing()){showPrices(null,null);pricing.kind=null;return null;}
    var R=data.reprice,t1=performance.now(),said=statusLine.textContent;
    var req=Object.assign(request('value'),{modifiers:R.modifiers||[],headline:R.headline||null,trials:state.trials!==null?state.trials:R.trials,seed:state.seed!==null?state.seed:R.seed,exact_only:true});
    statusLine.textContent=said+'; repricing…';
    function refused(r){showPrices(null,'Prices not recomputed with the panel\'s edits: '+r.resp.error.message);pricing.kind='refused';return null;}
    return engine.call(req).then(function(r){
      if(gen!==generation)return null;
      if(r.resp.error)return refused(r);
      var a=r.resp.ok;
      pricing.arms=a.arms;pricing.trials=a.trials;
      if(a.priced)return {a:a,kind:'exact'};
      if(a.arms*a.trials>PAGE_BATTLES){
        showPrices(null,'Prices not recomputed with the panel\'s edits: they are Monte Carlo, '+a.arms+' arms × '+a.trials+' trials, more than the page simulates; run battlelab value on the file you download.');
        pricing.kind='too large';return null;
      }
      req.exact_only=false;
      var what=said+'; simulating the prices ('+a.arms+' arms × '+a.trials+' trials, seed '+a.seed+')';
      statusLine.textContent=what+'…';
      return engine.call(req,false,showProgress(gen,what,pricing),a.arms*a.trials).then(function(r){
        progress.hidden=true;
        if(gen!==generation)return null;
        if(r.resp.error)return refused(r);
        return {a:r.resp.ok,kind:'simulated'};
      });
    }).then(function(x){
      if(!x||gen!==generation)return;
      var now=performance.now();
      pricing.kind=x.kind;pricing.ms=now-t1;pricing.edit_to_prices_ms=now-t0;
      showPrices(x.a,'With the panel\'s edits: the prices below are recomputed ('+x.kind+', '+x.a.trials+' trials per run and arm, seed '+x.a.seed+'), as battlelab value prints them for the edited file. Reset returns the file\'s prices.');
      statusLine.textContent=said+'; prices '+x.kind+' in '+Math.round(pricing.ms)+' ms';
    });
  }
  // A compare or equilibrium page's answer (data.answer: the module's op and what the
  // command was asked). With edits in force the module answers the edited file with the
  // command line's code (a comparison with its seed and trials, when that is at most
  // PAGE_BATTLES battles); each section of the page's tables.md gets the module's blocks,
  // the text tables.md prints, only laid out here. Without edits, when an edit is
  // refused, or when the answer has other sections than the page, the file's answer.
  var answerSections=[],answerNote=null,answering={kind:null,ms:null,edit_to_cells_ms:null,battles:null,progress:null};
  (function(){
    var section=document.getElementById('tables');
    if(!data.answer||!section)return;
    Array.prototype.forEach.call(section.querySelectorAll('details.section'),function(d){
      var body=d.querySelector('.body'),title=d.querySelector('summary');
      if(body)answerSections.push({title:title?title.textContent:null,body:body,original:body.cloneNode(true)});
    });
    answerNote=el('p',{'class':'live-note',role:'status',hidden:true});
    var h=section.querySelector('h2');
    section.insertBefore(answerNote,h?h.nextSibling:section.firstChild);
  })();
  // Markdown's inline `code` and **bold**, as the page renders tables.md.
  function inline(t){
    var out=[],rest=t,m;
    while(rest.length){
      if((m=/^`([^`]*)`/.exec(rest))){out.push(el('code',{text:m[1]}));rest=rest.slice(m[0].length);continue;}
      if((m=/^\*\*(.+?)\*\*/.exec(rest))){out.push(el('strong',{},inline(m[1])));rest=rest.slice(m[0].length);continue;}
      var k=rest.slice(1).search(/[`*]/),n=k<0?rest.length:k+1;
      out.push(rest.slice(0,n));rest=rest.slice(n);
    }
    return out;
  }
  // A section's body from the module's blocks: each table keeps the page's head (its
  // columns and their alignment), with the answer's rows.
  function answerBody(s,blocks){
    var heads=s.original.querySelectorAll('table'),k=0,body=el('div',{'class':'body'});
    blocks.forEach(function(b){
      if(typeof b.p==='string'){body.appendChild(el('p',{'class':'live-edited'},inline(b.p)));return;}
      if(typeof b.h==='string'){body.appendChild(el('h4',{},inline(b.h)));return;}
      var head=heads[Math.min(k,heads.length-1)],ths=head?head.querySelectorAll('thead th'):[];k++;
      var tbody=el('tbody');
      b.rows.forEach(function(r){tbody.appendChild(el('tr',{},r.map(function(c,i){
        var align=ths[i]?ths[i].getAttribute('class'):null;
        return el('td',{'class':(align?align+' ':'')+'live-edited'},inline(c));
      })));});
      body.appendChild(el('div',{'class':'scroll'},[el('table',{},[head&&head.tHead?head.tHead.cloneNode(true):null,tbody])]));
    });
    return body;
  }
  function showAnswer(sections,note){
    // The page's sections are the `##` ones: the answer's first (what precedes them) is
    // the page's title and header, left as the file's.
    var ours=sections?sections.slice(1):null;
    var fits=!!ours&&ours.length===answerSections.length&&ours.every(function(x,i){return x.title===answerSections[i].title;});
    answerSections.forEach(function(s,i){
      var fresh=fits?answerBody(s,ours[i].blocks):s.original.cloneNode(true);
      s.body.parentNode.replaceChild(fresh,s.body);
      s.body=fresh;
    });
    if(sections&&!fits)note='This page\'s answer not recomputed with the panel\'s edits: the edited file gives other sections ('+(ours?ours.length:0)+' rather than '+answerSections.length+'); run battlelab '+data.answer.op+' on the file you download.';
    if(answerNote){answerNote.hidden=!note;answerNote.textContent=note||'';}
    return fits;
  }
  function reanswer(gen,t0){
    if(!data.answer||!answerSections.length)return null;
    if(!editing()){showAnswer(null,null);answering.kind=null;return null;}
    var A=data.answer,t1=performance.now(),said=statusLine.textContent;
    var req=Object.assign(request(A.op),A.op==='compare'?{variants:A.variants.join(','),fdr:!!A.fdr,alpha:A.alpha,max_battles:0,
      trials:state.trials!==null?state.trials:(A.trials===null?undefined:A.trials),seed:state.seed!==null?state.seed:(A.seed===null?undefined:A.seed)}:{payoff:A.payoff===null?undefined:A.payoff});
    function refused(r){showAnswer(null,'This page\'s answer not recomputed with the panel\'s edits: '+r.resp.error.message);answering.kind='refused';return null;}
    // A comparison is first asked how many battles it simulates (max_battles 0: none
    // simulated), then run with the progress bar where the page simulates that many.
    var first=A.op==='compare'?engine.call(req).then(function(r){
      if(gen!==generation)return null;
      if(r.resp.error)return refused(r);
      var a=r.resp.ok;
      answering.battles=a.battles;
      if(a.battles>PAGE_BATTLES){
        showAnswer(null,'This page\'s comparison not recomputed with the panel\'s edits: it simulates '+a.pairs+' runs × 2 variants × '+a.trials+' trials, '+a.battles+' battles, more than the page simulates; run battlelab compare on the file you download.');
        answering.kind='too large';return null;
      }
      delete req.max_battles;
      var what=said+'; comparing the variants ('+a.pairs+' runs × 2 variants × '+a.trials+' trials, seed '+a.seed+')';
      statusLine.textContent=what+'…';
      return engine.call(req,false,showProgress(gen,what,answering),a.battles);
    }):(statusLine.textContent=said+'; solving the equilibria…',engine.call(req));
    return first.then(function(r){
      progress.hidden=true;
      if(!r||gen!==generation)return;
      if(r.resp.error){refused(r);return;}
      var a=r.resp.ok;
      var now=performance.now();
      answering.ms=now-t1;answering.edit_to_cells_ms=now-t0;
      var kind=A.op==='compare'?'simulated, '+a.trials+' trials per run and variant, seed '+a.seed:'solved';
      if(showAnswer(a.sections,'With the panel\'s edits: the tables below are recomputed ('+kind+'), as battlelab '+A.op+' prints them for the edited file. Reset returns the file\'s answer.'))answering.kind=A.op==='compare'?'simulated':'solved';
      else answering.kind='other sections';
      statusLine.textContent=said+'; '+A.op+' recomputed in '+Math.round(answering.ms)+' ms';
    });
  }
  function recompute(){
    var gen=++generation,t0=performance.now();
    editStart=t0;
    busy=true;
    clearErrors();
    statusLine.textContent='checking…';
    return engine.call(request('describe')).then(function(m){
      if(gen!==generation)return null;
      if(m.resp.error){fail(m.resp.error);return null;}
      current=m.resp.ok;
      var exact=current.runs.length>0&&current.runs.every(function(r){return r.exact;});
      var req=request(exact?'run':'start');
      if(state.seed!==null)req.seed=state.seed;
      if(state.trials!==null)req.trials=state.trials;
      if(exact){
        req.exact_only=true;
        statusLine.textContent='computing exactly…';
        return engine.call(req).then(function(r){return {r:r,kind:'exact'};});
      }
      progress.hidden=false;progress.value=0;
      statusLine.textContent='simulating…';
      return engine.simulate(req,function(done,blocks){
        if(gen!==generation)return;
        progress.max=blocks;progress.value=done;
        statusLine.textContent='simulating: '+done+' of '+blocks+' blocks';
      }).then(function(r){return {r:r,kind:'simulated'};});
    }).then(function(x){
      if(!x||gen!==generation||x.r.cancelled)return;
      if(x.r.resp.error){fail(x.r.resp.error);return;}
      lastKind=x.kind;
      timing.last_ms=performance.now()-t0;
      timing.worker_ms=x.r.ms;
      draw(x.r.resp.ok);
      progress.hidden=true;
      statusLine.textContent=(x.kind==='exact'?'exact':'simulated')+', recomputed in '+Math.round(timing.last_ms)+' ms';
      if(timing.first_result_ms===null)timing.first_result_ms=performance.now();
      return Promise.resolve(reprice(gen,t0)).then(function(){return reanswer(gen,t0);});
    }).catch(function(e){
      if(gen===generation){panelError.textContent=String(e&&e.message||e);progress.hidden=true;}
    }).then(function(){if(gen===generation)busy=false;});
  }
  function idle(){
    return new Promise(function(resolve){
      (function poll(){if(timer===null&&!busy)resolve();else setTimeout(poll,20);})();
    });
  }
  function verdict(fails){
    var limit=selftest.width||window.innerWidth;
    if(selftest.width)document.documentElement.style.width=selftest.width+'px';
    var errors=order.filter(function(p){return fields[p].error.textContent;}).map(function(p){return {path:p,message:fields[p].error.textContent};});
    if(panelError.textContent)errors.push({path:null,message:panelError.textContent});
    var over=BL.overflow(limit);
    fails=fails.concat(over);
    var v={ok:fails.length===0,fails:fails,kind:lastKind,shown:BL.shown(out),live:live.map(function(x){return {table:x.cell.table,row:x.cell.row,column:x.cell.column,text:mdText(x.td),marked:x.td.classList.contains('live-edited')};}),live_chart:liveChart?liveChart.querySelectorAll('svg rect').length:0,static_marked:staticTables.filter(function(n){return !n.hidden;}).length,
      printed:printedTables.map(function(p){return {table:p.index,key:p.key,rows:Array.prototype.map.call(p.table.tBodies[0].rows,function(r){return Array.prototype.map.call(r.cells,mdText);}),note:p.note?p.note.textContent:null,marked:!!p.table.tBodies[0].querySelector('td.live-edited'),differs:!p.differs.hidden};}),printing:printing,errors:errors,hash:location.hash,fields:order.length,
      chart:chartBox.querySelectorAll('svg rect').length,timing:timing,load_ms:performance.getEntriesByType('navigation').map(function(n){return n.loadEventEnd;})[0]||null,
      prices:priced.map(function(p){return Array.prototype.map.call(p.table.tBodies[0].rows,function(r){return Array.prototype.map.call(r.cells,function(c){return c.textContent;});});}),prices_marked:priced.filter(function(p){return !!p.table.querySelector('td.live-edited');}).length,pricing:pricing,
      answer:answerSections.map(function(s){return {title:s.title,blocks:Array.prototype.map.call(s.body.children,function(c){
        return c.tagName==='P'?{p:c.textContent}:c.tagName==='H4'?{h:c.textContent}:{rows:Array.prototype.map.call(c.querySelectorAll('tbody tr'),function(r){return Array.prototype.map.call(r.cells,function(td){return td.textContent;});})};
      })};}),answer_marked:answerSections.filter(function(s){return !!s.body.querySelector('.live-edited');}).length,answering:answering,
      downloaded:downloaded,page_bytes:document.documentElement.outerHTML.length,module_chars:document.getElementById('bl-module').textContent.length};
    var pre=el('pre',{id:'tryit-selftest',text:'TRYIT '+JSON.stringify(v)});
    document.body.appendChild(pre);
  }
  function runSelftest(){
    var fails=[];
    if(selftest.payload_error)fails.push('payload: '+selftest.payload_error);
    var typed=selftest.type||{};
    Object.keys(typed).forEach(function(p){
      var f=fields[p],v=typed[p];
      if(!f||!f.input){fails.push('no field '+p);return;}
      if(f.inputs&&f.split&&Array.isArray(v))f.inputs.forEach(function(i,r){if(r<v.length&&v[r]!==null){i.value=String(v[r]);i.dispatchEvent(new Event('input',{bubbles:true}));}});
      else{f.input.value=String(v);f.input.dispatchEvent(new Event('input',{bubbles:true}));}
    });
    if(selftest.reset)resetAll();
    setTimeout(function(){idle().then(function(){
      if(!selftest.download)return verdict(fails);
      downloadEdited().then(function(files){downloaded=files;verdict(fails);});
    });},0);
  }
  engine.ready.then(function(m){timing.module_ms=m.ms;});
  busy=true;
  engine.call(request('describe')).then(function(m){
    if(m.resp.error){root.textContent='';root.appendChild(panelError);fail(m.resp.error);busy=false;if(selftest)verdict(['the file as written is refused']);return;}
    base=m.resp.ok;
    build(base);
    var shared=/^#tryit=(.*)$/.exec(hash),open=selftest&&selftest.open?/^#?tryit=(.*)$/.exec(selftest.open):null;
    var link=open||shared;
    if(link){try{applyShared(decodeURIComponent(link[1]));}catch(e){panelError.textContent='The link\'s settings could not be read: '+e.message;}}
    updateHash();
    if(selftest)history.replaceState(null,'',location.href.replace(/#.*$/,'')+(shareText()?'#tryit='+encodeURIComponent(shareText()):'#tryit-selftest'));
    recompute().then(function(){if(selftest)runSelftest();});
  }).catch(function(e){
    root.textContent='The calculator could not start in this browser: '+(e&&e.message||e);
    if(selftest){busy=false;verdict(['the calculator could not start: '+(e&&e.message||e)]);}
  });
})();
"#;
