//! `playground.html`: one page with an editor for an analysis and its rules file, checked
//! and run as you type by the core compiled to WebAssembly.
//!
//! Why this module exists: a designer writing a CRT wants to see each cell's effect at
//! once, and to send the co-designer one file that needs no install. The page carries
//! the files as first written, the module and the script (shared with the report page's
//! "try it" panel, [`crate::report::tryit`]); every edit is validated (debounced) by the
//! module with the CLI's own message, shown under the file it names with its line, and a
//! valid pair is run: exactly where the runs are exact, else by the file's seeded Monte
//! Carlo with a progress bar. Nothing is fetched: the page works from `file://`.
//!
//! The page's own self-test, `#playground-selftest=<JSON>` (`{"edit": [{"file": 0,
//! "from": "…", "to": "…"}]}`: file 0 is the analysis, 1… its companions), makes the
//! edits in the editors, waits for the result and writes `PLAYGROUND {verdict}` into
//! `<pre id="playground-selftest">`.

use std::fmt::Write as _;

use crate::report::index::escape;
use crate::report::tryit::{self, Source};

/// What the page's first lines carry, so that `battlelab playground` knows a page it
/// wrote (and replaces only those).
pub const MARKER: &str = "<meta name=\"generator\" content=\"battlelab playground\">";

/// The files the page starts from when none is given: the classic odds CRT and its rules
/// file, as shipped (`analyses/classic_crt.toml`, `rules/classic_crt.toml`).
pub fn example() -> Source {
    Source {
        analysis_name: "classic_crt.toml".into(),
        analysis_text: include_str!("../../analyses/classic_crt.toml").into(),
        files: vec![(
            "../rules/classic_crt.toml".into(),
            include_str!("../../rules/classic_crt.toml").into(),
        )],
        live: None,
        scope: None,
        reprice: None,
        answer: None,
    }
}

/// The page for `source`, with the module `module_gz` (`None` where the module was not
/// built: the page then says so instead of running).
pub fn page(source: &Source, module_gz: &[u8]) -> String {
    let mut files: Vec<(String, String)> = source.files.clone();
    if files.is_empty() {
        files.push((String::new(), String::new()));
    }
    let data = serde_json::json!({
        "analysis": {"name": source.analysis_name, "text": source.analysis_text},
        "files": files.iter().map(|(n, t)| serde_json::json!({"name": n, "text": t})).collect::<Vec<_>>(),
    });
    let mut html = String::new();
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str(MARKER);
    html.push('\n');
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        html,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        tryit::CSP_WITH_WASM
    );
    let _ = writeln!(
        html,
        "<title>{} — battlelab playground</title>",
        escape(&source.analysis_name)
    );
    let _ = writeln!(
        html,
        "<style>{STYLE}{}</style>\n</head>\n<body>",
        tryit::STYLE
    );
    html.push_str("<h1>battlelab playground</h1>\n<p class=\"lead\">Edit the analysis and its rules file: every change is checked with battlelab's own messages and run at once — exactly where the runs are exact, else by the file's seeded Monte Carlo (the same counts as <code>battlelab run</code>). Nothing leaves this page; save it (or the files, below) to share.</p>\n");
    if module_gz.is_empty() {
        html.push_str("<p class=\"error\">This battlelab was built without its WebAssembly core (rustup target add wasm32-unknown-unknown, then rebuild), so this page cannot check or run the files.</p>\n");
    }
    html.push_str("<div id=\"playground\" class=\"tryit\"><div class=\"editors\" id=\"pg-editors\"></div>\n<div class=\"buttons\"><button type=\"button\" id=\"pg-download\">download the files</button><span class=\"note\" id=\"pg-status\" role=\"status\"></span></div>\n<div id=\"pg-downloads\"></div><progress id=\"pg-progress\" max=\"1\" value=\"0\" hidden></progress>\n<div id=\"pg-out\"></div><div id=\"pg-chart\"></div></div>\n");
    let _ = writeln!(
        html,
        "<script type=\"application/json\" id=\"playground-data\">{}</script>",
        tryit::script_json(&data)
    );
    html.push_str(&tryit::module_elements(module_gz));
    if !module_gz.is_empty() {
        let _ = writeln!(html, "<script>{}{PLAYGROUND_JS}</script>", tryit::CLIENT_JS);
    }
    html.push_str("</body>\n</html>\n");
    html
}

const STYLE: &str = r#"
:root{color-scheme:light;--fg:#1b1f24;--muted:#59636e;--line:#d0d7de;--bg2:#f6f8fa;--accent:#0b5cad}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0 auto;max-width:1180px;padding:1rem 1.25rem 3rem;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:var(--fg);background:#fff;overflow-wrap:anywhere}
h1{font-size:1.6rem;margin:.5rem 0}
.lead{font-size:1.05rem}
.muted{color:var(--muted)}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em}
.scroll{overflow-x:auto;max-width:100%;margin:.5rem 0 1rem}
table{border-collapse:collapse;font-size:.9rem;font-variant-numeric:tabular-nums}
th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;white-space:nowrap}
th{background:var(--bg2)}
.editors{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,30rem),1fr));gap:1rem}
.editor{min-width:0}
.editor textarea{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85rem;line-height:1.4;min-height:22rem;white-space:pre;overflow:auto;resize:vertical}
.editor .error{margin-top:.3rem}
#playground-selftest{white-space:pre-wrap}
@media (max-width:700px){body{padding:.75rem .75rem 2rem;font-size:15px}.editor textarea{min-height:14rem}}
"#;

/// The playground's script: editors from the page's data, a debounced check and run on
/// every edit, errors under the file they name with their line, the download, and the
/// self-test.
const PLAYGROUND_JS: &str = r#"
(function(){
  'use strict';
  var el=BL.el,data=JSON.parse(document.getElementById('playground-data').textContent),engine;
  var box=document.getElementById('pg-editors'),status=document.getElementById('pg-status'),progress=document.getElementById('pg-progress');
  var out=document.getElementById('pg-out'),chartBox=document.getElementById('pg-chart'),downloads=document.getElementById('pg-downloads');
  var editors=[],timer=null,busy=false,generation=0,lastKind=null,timing={module_ms:null,first_result_ms:null,last_ms:null,worker_ms:null};
  var selftest=null,m=/^#playground-selftest=(.*)$/.exec(location.hash);
  if(m){try{selftest=JSON.parse(decodeURIComponent(m[1]));}catch(e){selftest={payload_error:String(e)};}}
  function editor(kind,name,text,i){
    var id='pg-file'+i,nameInput=el('input',{type:'text',value:name,id:id+'-name',spellcheck:'false',autocomplete:'off',placeholder:kind==='analysis'?'my_game.toml':'my_game.rules.toml'});
    var area=el('textarea',{id:id,spellcheck:'false',autocomplete:'off',wrap:'off','aria-label':kind});
    area.value=text;
    var err=el('div',{'class':'error',role:'alert'});
    var label=kind==='analysis'?'The analysis file, named':'A file it names (its rules), as the analysis names it';
    box.appendChild(el('div',{'class':'editor'},[el('label',{'for':id+'-name',text:label}),nameInput,area,err]));
    var ed={kind:kind,name:nameInput,text:area,error:err};
    [nameInput,area].forEach(function(x){x.addEventListener('input',schedule);});
    editors.push(ed);
  }
  editor('analysis',data.analysis.name,data.analysis.text,0);
  data.files.forEach(function(f,i){editor('rules',f.name,f.text,i+1);});
  function request(op){
    var files={};
    editors.slice(1).forEach(function(e){if(e.name.value.trim())files[e.name.value.trim()]=e.text.value;});
    return {op:op,analysis:{name:editors[0].name.value.trim()||'analysis.toml',text:editors[0].text.value},files:files};
  }
  function schedule(){
    if(timer)clearTimeout(timer);
    status.textContent='…';
    timer=setTimeout(function(){timer=null;recompute();},350);
  }
  function editorOf(file){
    if(!file)return editors[0];
    var f=String(file).replace(/\\/g,'/');
    var names=editors.map(function(e){return e.name.value.trim().replace(/\\/g,'/');});
    // The file as named, else one ending in it (or it in one), else by its last part.
    var tests=[function(n){return n===f;},function(n){return f.slice(-n.length-1)==='/'+n||n.slice(-f.length-1)==='/'+f;},function(n){return n.split('/').pop()===f.split('/').pop();}];
    for(var t=0;t<tests.length;t++)for(var i=0;i<names.length;i++)if(names[i]&&tests[t](names[i]))return editors[i];
    return editors[0];
  }
  function fail(err){
    var e=editorOf(err.file),text=err.message;
    if(err.line){
      var line=e.text.value.split('\n')[err.line-1];
      if(line!==undefined)text+='\n  line '+err.line+': '+line;
    }
    e.error.textContent=text;
    e.text.setAttribute('aria-invalid','true');
    progress.hidden=true;
    out.textContent='';chartBox.textContent='';
    status.textContent='not run: fix the file marked';
  }
  function clear(){editors.forEach(function(e){e.error.textContent='';e.text.removeAttribute('aria-invalid');});}
  function recompute(){
    var gen=++generation,t0=performance.now(),current=null;
    busy=true;
    status.textContent='checking…';
    return engine.call(request('describe')).then(function(m){
      if(gen!==generation)return null;
      clear();
      if(m.resp.error){fail(m.resp.error);return null;}
      current=m.resp.ok;
      var exact=current.runs.length>0&&current.runs.every(function(r){return r.exact;});
      var req=request(exact?'run':'start');
      if(exact){req.exact_only=true;status.textContent='computing exactly…';return engine.call(req).then(function(r){return {r:r,kind:'exact'};});}
      progress.hidden=false;progress.value=0;status.textContent='simulating…';
      return engine.simulate(req,function(done,blocks){if(gen!==generation)return;progress.max=blocks;progress.value=done;status.textContent='simulating: '+done+' of '+blocks+' blocks';}).then(function(r){return {r:r,kind:'simulated'};});
    }).then(function(x){
      if(!x||gen!==generation||x.r.cancelled)return;
      if(x.r.resp.error){fail(x.r.resp.error);return;}
      lastKind=x.kind;timing.last_ms=performance.now()-t0;timing.worker_ms=x.r.ms;
      out.textContent='';out.appendChild(BL.results(x.r.resp.ok,current.axes));
      chartBox.textContent='';chartBox.appendChild(BL.chart(x.r.resp.ok,current.axes));
      progress.hidden=true;
      status.textContent=(x.kind==='exact'?'exact':'simulated')+', in '+Math.round(timing.last_ms)+' ms';
      if(timing.first_result_ms===null)timing.first_result_ms=performance.now();
    }).catch(function(e){if(gen===generation){status.textContent='';editors[0].error.textContent=String(e&&e.message||e);progress.hidden=true;}})
      .then(function(){if(gen===generation)busy=false;});
  }
  document.getElementById('pg-download').addEventListener('click',function(){
    var files={};
    editors.forEach(function(e){var n=e.name.value.trim();if(n)files[n]=e.text.value;});
    BL.download(downloads,files);
  });
  function idle(){return new Promise(function(r){(function p(){if(timer===null&&!busy)r();else setTimeout(p,20);})();});}
  function verdict(fails){
    var limit=selftest.width||window.innerWidth;
    if(selftest.width)document.documentElement.style.width=selftest.width+'px';
    fails=fails.concat(BL.overflow(limit));
    var errors=editors.map(function(e,i){return {file:i,name:e.name.value,message:e.error.textContent};}).filter(function(e){return e.message;});
    var v={ok:fails.length===0,fails:fails,kind:lastKind,shown:BL.shown(out),errors:errors,chart:chartBox.querySelectorAll('svg rect').length,timing:timing};
    document.body.appendChild(el('pre',{id:'playground-selftest',text:'PLAYGROUND '+JSON.stringify(v)}));
  }
  try{engine=new BL.Engine();}catch(e){status.textContent='This browser cannot run the calculator here: '+e.message;return;}
  engine.ready.then(function(m){timing.module_ms=m.ms;});
  busy=true;
  recompute().then(function(){
    if(!selftest)return;
    var fails=[];
    if(selftest.payload_error)fails.push('payload: '+selftest.payload_error);
    (selftest.edit||[]).forEach(function(e){
      var ed=editors[e.file||0];
      if(!ed){fails.push('no editor '+e.file);return;}
      if(ed.text.value.indexOf(e.from)<0){fails.push('not in editor '+e.file+': '+e.from);return;}
      ed.text.value=ed.text.value.replace(e.from,e.to);
      ed.text.dispatchEvent(new Event('input',{bubbles:true}));
    });
    setTimeout(function(){idle().then(function(){verdict(fails);});},0);
  });
})();
"#;
