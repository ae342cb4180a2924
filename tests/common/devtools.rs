//! A small Chrome DevTools Protocol client over `--remote-debugging-pipe` (file
//! descriptors 3 and 4, JSON messages ended by a NUL byte): enough to open a page at a
//! phone's size, read what its script wrote, and list its console messages and requests.
//!
//! Why it exists: headless Chromium's `--dump-dom --virtual-time-budget` does not wait for
//! a Web Worker (virtual time runs on while the page waits for the Worker's answer), and
//! the "try it" panel computes in one. Over the pipe the test waits for the page's own
//! verdict in real time, and sees every request and console message, worker's included.
//! No crate is needed for a pipe of NUL-separated JSON.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// One headless Chromium, driven over its DevTools pipe.
pub struct Browser {
    child: Child,
    to: File,
    from: mpsc::Receiver<Value>,
    next: u64,
    /// Every event received so far (console, log, network), in order.
    pub events: Vec<Value>,
    _profile: tempfile::TempDir,
}

fn pipe() -> (i32, i32) {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", io::Error::last_os_error());
    (fds[0], fds[1])
}

/// How long one DevTools command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

impl Browser {
    /// Starts `chromium` headless with its DevTools on a pipe.
    pub fn launch(chromium: &Path) -> Self {
        let profile = tempfile::tempdir().unwrap();
        let (command_read, command_write) = pipe();
        let (answer_read, answer_write) = pipe();
        let mut command = Command::new(chromium);
        command
            .args(crate::common::HEADLESS_CHROMIUM)
            .args(["--hide-scrollbars", "--remote-debugging-pipe"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec. The
        // ends are first moved above 9 so that placing them at 3 and 4 cannot clobber
        // one another; dup2 leaves the copies at 3 and 4 open across exec.
        unsafe {
            command.pre_exec(move || {
                let read = libc::fcntl(command_read, libc::F_DUPFD, 10);
                let write = libc::fcntl(answer_write, libc::F_DUPFD, 10);
                if read < 0 || write < 0 || libc::dup2(read, 3) < 0 || libc::dup2(write, 4) < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromium.display()));
        // SAFETY: each descriptor is ours, open, and closed or owned exactly once here.
        let (to, mut answers) = unsafe {
            libc::close(command_read);
            libc::close(answer_write);
            (
                File::from_raw_fd(command_write),
                File::from_raw_fd(answer_read),
            )
        };
        let (send, from) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buffer: Vec<u8> = Vec::new();
            let mut chunk = [0u8; 65536];
            loop {
                let n = match answers.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                buffer.extend_from_slice(&chunk[..n]);
                while let Some(end) = buffer.iter().position(|&b| b == 0) {
                    let message: Vec<u8> = buffer.drain(..=end).collect();
                    if let Ok(value) = serde_json::from_slice(&message[..end]) {
                        if send.send(value).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Self {
            child,
            to,
            from,
            next: 0,
            events: Vec::new(),
            _profile: profile,
        }
    }

    /// Sends `method` (to the page `session`, or the browser) and returns its result.
    pub fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to
            .write_all(&bytes)
            .expect("the DevTools pipe is open");
        let started = Instant::now();
        loop {
            let left = COMMAND_TIMEOUT.saturating_sub(started.elapsed());
            let answer = self.from.recv_timeout(left).unwrap_or_else(|e| {
                panic!("no answer to {method} within {COMMAND_TIMEOUT:?}: {e}")
            });
            if answer.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(error) = answer.get("error") {
                    panic!("{method}: {error}");
                }
                return answer["result"].clone();
            }
            self.events.push(answer);
        }
    }

    /// Opens `url` in a new page of `width` × `height` CSS pixels (a phone under 500 px)
    /// with console, log and network events on; returns the page's session.
    pub fn open(&mut self, url: &str, width: u32, height: u32) -> String {
        let target = self.call(None, "Target.createTarget", json!({"url": "about:blank"}))
            ["targetId"]
            .clone();
        let session = self.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        )["sessionId"]
            .as_str()
            .unwrap()
            .to_string();
        for domain in [
            "Runtime.enable",
            "Log.enable",
            "Network.enable",
            "Page.enable",
        ] {
            self.call(Some(&session), domain, json!({}));
        }
        self.call(
            Some(&session),
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500}),
        );
        self.call(Some(&session), "Page.navigate", json!({"url": url}));
        session
    }

    /// The value of `expression` in the page.
    pub fn evaluate(&mut self, session: &str, expression: &str) -> Value {
        self.call(
            Some(session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        )["result"]["value"]
            .clone()
    }

    /// Every console message, uncaught exception and browser log entry (a CSP refusal,
    /// a failed load) so far, as `level: text`.
    pub fn console(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for event in &self.events {
            let params = &event["params"];
            match event["method"].as_str() {
                Some("Runtime.consoleAPICalled") => {
                    let args: Vec<String> = params["args"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|a| {
                            a.get("value")
                                .map_or_else(|| a["description"].to_string(), |v| v.to_string())
                        })
                        .collect();
                    lines.push(format!("{}: {}", params["type"], args.join(" ")));
                }
                Some("Runtime.exceptionThrown") => {
                    lines.push(format!("exception: {}", params["exceptionDetails"]))
                }
                Some("Log.entryAdded") => lines.push(format!(
                    "{}: {}",
                    params["entry"]["level"], params["entry"]["text"]
                )),
                _ => {}
            }
        }
        lines
    }

    /// Every URL the pages asked for so far.
    pub fn requests(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str().map(str::to_string))
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl crate::common::pages::PageClient for Browser {
    fn evaluate(&mut self, target: &str, expression: &str) -> Value {
        Browser::evaluate(self, target, expression)
    }

    fn console(&self) -> Vec<String> {
        Browser::console(self)
    }
}
