//! Runs one request read from standard input and prints the response, with the time it
//! took on standard error: `battlelab_wasm::call` natively, for trying a request and
//! timing it.

use std::io::Read;

fn main() {
    let mut request = String::new();
    std::io::stdin()
        .read_to_string(&mut request)
        .expect("a request on standard input");
    let start = std::time::Instant::now();
    let response = battlelab_wasm::call(&request);
    eprintln!("{:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    println!("{response}");
}
