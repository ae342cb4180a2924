//! A small WebDriver BiDi client for headless Firefox: enough to open a page at a phone's
//! size, read what its script wrote, and list its console messages, script errors and
//! requests — what `devtools.rs` does for Chromium over the DevTools pipe.
//!
//! Why it exists: the report page and the playground promise to work in Firefox too, and
//! headless Firefox has no `--dump-dom`; its `--screenshot` shows pixels, not the
//! verdict's text. Firefox speaks WebDriver BiDi (the W3C protocol) itself when started
//! with `--remote-debugging-port 0`: it picks a free port and says `WebDriver BiDi
//! listening on ws://127.0.0.1:PORT` on stderr, and `ws://…/session` takes JSON commands
//! with no driver program in between. The WebSocket a test needs is the least of RFC 6455
//! (one handshake; masked text frames out; whole, possibly fragmented, frames in; no TLS,
//! no extensions), about ninety lines here rather than a WebSocket crate whose HTTP, TLS
//! and random-number dependencies the test build would compile for this one client.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long Firefox may take to start listening, and one command to answer.
const START_TIMEOUT: Duration = Duration::from_secs(60);
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one `script.evaluate` may go unanswered before the poll asks again.
const EVALUATE_TIMEOUT: Duration = Duration::from_secs(10);

/// Preferences of the throwaway profile: nothing fetched in the background, no first-run
/// pages or prompts (the page under test is the only thing that may ask for anything).
const USER_JS: &str = r#"
user_pref("app.normandy.enabled", false);
user_pref("app.update.disabledForTesting", true);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("browser.startup.page", 0);
user_pref("browser.safebrowsing.malware.enabled", false);
user_pref("browser.safebrowsing.phishing.enabled", false);
user_pref("browser.newtabpage.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("extensions.update.enabled", false);
user_pref("messaging-system.rsexperimentloader.enabled", false);
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("remote.active-protocols", 1);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
"#;

/// One headless Firefox, driven over WebDriver BiDi.
pub struct Browser {
    child: Child,
    socket: TcpStream,
    from: mpsc::Receiver<Value>,
    next: u64,
    /// Every event received so far (log entries, requests), in order.
    pub events: Vec<Value>,
    /// The Firefox version, as the session reports it.
    pub version: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts `firefox` headless with a fresh profile and opens a BiDi session that
    /// subscribes to log entries and requests.
    pub fn launch(firefox: &Path) -> Self {
        let profile = tempfile::tempdir().unwrap();
        std::fs::write(profile.path().join("user.js"), USER_JS).unwrap();
        let mut child = Command::new(firefox)
            .args(["--headless", "--no-remote", "--profile"])
            .arg(profile.path())
            .args(["--remote-debugging-port", "0", "about:blank"])
            .env("MOZ_CRASHREPORTER_DISABLE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", firefox.display()));
        // The address is on stderr; the rest of stderr is drained so Firefox never blocks.
        let (said, address) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.split("WebDriver BiDi listening on ws://").nth(1) {
                    let _ = said.send(at.trim().to_string());
                }
            }
        });
        let host = match address.recv_timeout(START_TIMEOUT) {
            Ok(host) => host,
            Err(e) => {
                let _ = child.kill();
                panic!("{} did not open WebDriver BiDi: {e}", firefox.display());
            }
        };
        let socket = TcpStream::connect(&host).unwrap();
        handshake(&socket, &host);
        let (send, from) = mpsc::channel();
        let reader = socket.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(reader);
            while let Ok(Some(text)) = read_message(&mut reader) {
                if let Ok(value) = serde_json::from_str(&text) {
                    if send.send(value).is_err() {
                        return;
                    }
                }
            }
        });
        let mut browser = Self {
            child,
            socket,
            from,
            next: 0,
            events: Vec::new(),
            version: String::new(),
            _profile: profile,
        };
        let session = browser.call("session.new", json!({"capabilities": {}}));
        browser.version = session["capabilities"]["browserVersion"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        browser.call(
            "session.subscribe",
            json!({"events": ["log.entryAdded", "network.beforeRequestSent"]}),
        );
        browser
    }

    /// Sends `method` and returns its result; events meanwhile are kept in `events`.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.call_within(method, params, COMMAND_TIMEOUT)
            .unwrap_or_else(|| panic!("no answer to {method} within {COMMAND_TIMEOUT:?}"))
    }

    /// [`Browser::call`], or `None` when no answer comes within `timeout` (a late answer
    /// is then kept with the events, which no reader takes for an answer).
    fn call_within(&mut self, method: &str, params: Value, timeout: Duration) -> Option<Value> {
        self.next += 1;
        let id = self.next;
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        write_text(&mut self.socket, message.as_bytes(), id as u32)
            .expect("the BiDi socket is open");
        let started = Instant::now();
        loop {
            let left = timeout.saturating_sub(started.elapsed());
            let answer = self.from.recv_timeout(left).ok()?;
            if answer.get("id").and_then(Value::as_u64) == Some(id) {
                if answer["type"] == "error" {
                    panic!("{method}: {answer}");
                }
                return Some(answer["result"].clone());
            }
            self.events.push(answer);
        }
    }

    /// Opens `url` in the first tab at `width` × `height` CSS pixels once it has loaded;
    /// returns the tab.
    pub fn open(&mut self, url: &str, width: u32, height: u32) -> String {
        let tree = self.call("browsingContext.getTree", json!({}));
        let context = tree["contexts"][0]["context"]
            .as_str()
            .expect("a tab")
            .to_string();
        self.call(
            "browsingContext.setViewport",
            json!({"context": context, "viewport": {"width": width, "height": height}}),
        );
        // Waits for the load event: a script evaluated while the document is being
        // replaced can go unanswered.
        self.call(
            "browsingContext.navigate",
            json!({"context": context, "url": url, "wait": "complete"}),
        );
        context
    }

    /// The value of `expression` in the tab (a string, or null for anything else).
    pub fn evaluate(&mut self, context: &str, expression: &str) -> Value {
        // A script evaluated while the document is being replaced can go unanswered
        // (seen once, under load): that poll reads null, and the next one asks again.
        let Some(answer) = self.call_within(
            "script.evaluate",
            json!({"expression": expression, "target": {"context": context}, "awaitPromise": false}),
            EVALUATE_TIMEOUT,
        ) else {
            return Value::Null;
        };
        match answer["type"].as_str() {
            Some("success") => answer["result"]["value"].clone(),
            // The page is still loading (the document was swapped underneath).
            _ => Value::Null,
        }
    }

    /// Every log entry so far — console messages and uncaught script errors, a Worker's
    /// included — as `level: text`.
    pub fn console(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "log.entryAdded")
            .map(|e| {
                let p = &e["params"];
                format!("{} {}: {}", p["type"], p["level"], p["text"])
            })
            .collect()
    }

    /// Every URL the page asked for over the network layer so far.
    pub fn requests(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "network.beforeRequestSent")
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

/// The client's opening handshake on `/session`; panics unless the server switches.
fn handshake(socket: &TcpStream, host: &str) {
    let mut writer = socket;
    // The key is any 16 bytes in base64; the server's answer to it is not checked.
    write!(
        writer,
        "GET /session HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: YmF0dGxlbGFiIHRlc3RzIQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let mut reader = socket;
        reader
            .read_exact(&mut byte)
            .expect("Firefox answers the handshake");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(
        head.starts_with("HTTP/1.1 101"),
        "WebDriver BiDi refused the WebSocket: {head}"
    );
}

/// One text message from the client: a single final frame, masked as RFC 6455 requires
/// of clients (the mask need not be secret here: nothing sits between the two ends).
fn write_text(socket: &mut TcpStream, payload: &[u8], mask_seed: u32) -> io::Result<()> {
    let mask = mask_seed.wrapping_mul(0x9E37_79B9).to_be_bytes();
    let mut frame = vec![0x81];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n if n <= 0xFFFF => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    socket.write_all(&frame)
}

/// The next whole text message from the server (frames joined until the final one;
/// pings and pongs skipped), or `None` once it closes.
fn read_message(reader: &mut impl Read) -> io::Result<Option<String>> {
    let mut message = Vec::new();
    loop {
        let mut head = [0u8; 2];
        reader.read_exact(&mut head)?;
        let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0F);
        let length = match head[1] & 0x7F {
            126 => {
                let mut b = [0u8; 2];
                reader.read_exact(&mut b)?;
                u64::from(u16::from_be_bytes(b))
            }
            127 => {
                let mut b = [0u8; 8];
                reader.read_exact(&mut b)?;
                u64::from_be_bytes(b)
            }
            n => u64::from(n),
        };
        let mask = if head[1] & 0x80 != 0 {
            let mut m = [0u8; 4];
            reader.read_exact(&mut m)?;
            Some(m)
        } else {
            None
        };
        let mut payload = vec![0u8; length as usize];
        reader.read_exact(&mut payload)?;
        if let Some(m) = mask {
            payload
                .iter_mut()
                .enumerate()
                .for_each(|(i, b)| *b ^= m[i % 4]);
        }
        match opcode {
            0x8 => return Ok(None),
            0x9 | 0xA => continue,
            _ => message.extend_from_slice(&payload),
        }
        if fin {
            return Ok(Some(String::from_utf8_lossy(&message).into_owned()));
        }
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
