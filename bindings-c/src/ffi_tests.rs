//! The C API exercised from Rust through the exported functions, with
//! `extern "C"` callbacks standing in for C code and core's client on the
//! other end of a real HTTP connection.

use std::ffi::{CStr, CString, c_char, c_void};
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::{
    ferromcp_call, ferromcp_call_fail, ferromcp_call_is_cancelled, ferromcp_call_respond,
    ferromcp_call_respond_result, ferromcp_last_error_message, ferromcp_server,
    ferromcp_server_add_tool, ferromcp_server_free, ferromcp_server_http_port, ferromcp_server_new,
    ferromcp_server_serve_http, ferromcp_server_serve_stdio, ferromcp_server_shutdown,
    ferromcp_status, ferromcp_tool_callback,
};
use ferromcp_core::client::Client;
use serde_json::{Value, json};

const OBJECT: &CStr = c"{\"type\":\"object\"}";

fn last_error() -> String {
    // SAFETY: always a valid, thread-owned C string.
    unsafe { CStr::from_ptr(ferromcp_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

struct OwnedServer(*mut ferromcp_server);

// SAFETY: the C API allows a server to be used from several threads.
unsafe impl Send for OwnedServer {}
// SAFETY: as above; only `const` functions are used through shared references.
unsafe impl Sync for OwnedServer {}

impl OwnedServer {
    fn new() -> OwnedServer {
        let mut server = ptr::null_mut();
        // SAFETY: valid strings and out pointer.
        let status =
            unsafe { ferromcp_server_new(c"ffi-test".as_ptr(), c"0.1.0".as_ptr(), &mut server) };
        assert_eq!(status, ferromcp_status::FERROMCP_OK);
        OwnedServer(server)
    }

    fn add(&self, name: &CStr, output_schema: Option<&CStr>, callback: ferromcp_tool_callback) {
        self.add_with(name, output_schema, callback, ptr::null_mut(), None);
    }

    fn add_with(
        &self,
        name: &CStr,
        output_schema: Option<&CStr>,
        callback: ferromcp_tool_callback,
        userdata: *mut c_void,
        userdata_free: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> ferromcp_status {
        // SAFETY: live server, valid strings.
        unsafe {
            ferromcp_server_add_tool(
                self.0,
                name.as_ptr(),
                c"test tool".as_ptr(),
                OBJECT.as_ptr(),
                output_schema.map_or(ptr::null(), CStr::as_ptr),
                callback,
                userdata,
                userdata_free,
            )
        }
    }
}

impl Drop for OwnedServer {
    fn drop(&mut self) {
        // SAFETY: created by ferromcp_server_new, freed once.
        unsafe { ferromcp_server_free(self.0) }
    }
}

/// Serves HTTP on a free port in a thread; stops and joins on drop.
struct Serving<'a> {
    server: &'a OwnedServer,
    thread: Option<std::thread::ScopedJoinHandle<'a, ferromcp_status>>,
    port: u16,
}

fn with_http_server<R>(server: &OwnedServer, body: impl FnOnce(&Client, u16) -> R) -> R {
    std::thread::scope(|scope| {
        let thread = scope.spawn(|| {
            // SAFETY: live server and host string.
            unsafe { ferromcp_server_serve_http(server.0, c"127.0.0.1".as_ptr(), 0) }
        });
        let mut port = 0u16;
        let deadline = Instant::now() + Duration::from_secs(10);
        // SAFETY: live server, valid out pointer.
        while unsafe { ferromcp_server_http_port(server.0, &mut port) }
            != ferromcp_status::FERROMCP_OK
        {
            assert!(Instant::now() < deadline, "server did not start listening");
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut serving = Serving {
            server,
            thread: Some(thread),
            port,
        };
        let client = ferromcp_core::runtime::get()
            .block_on(Client::connect_http(&format!(
                "http://127.0.0.1:{port}/mcp"
            )))
            .expect("client connects");
        let result = body(&client, serving.port);
        serving.stop();
        result
    })
}

impl Serving<'_> {
    fn stop(&mut self) {
        // SAFETY: live server.
        assert_eq!(
            unsafe { ferromcp_server_shutdown(self.server.0) },
            ferromcp_status::FERROMCP_OK
        );
        if let Some(thread) = self.thread.take() {
            assert_eq!(
                thread.join().expect("serve thread"),
                ferromcp_status::FERROMCP_OK
            );
        }
    }
}

/// Calls a tool; the result as its wire JSON, so assertions read like the
/// protocol rather than core's typed model.
fn call(client: &Client, name: &str, arguments: Value) -> Value {
    let result = ferromcp_core::runtime::get()
        .block_on(client.call_tool(name, arguments))
        .expect("tools/call succeeds at the protocol level");
    serde_json::to_value(result).expect("a CallToolResult serialises")
}

fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

// ---- callbacks ----

/// SAFETY (all callbacks): called by ferromcp with valid arguments.
unsafe extern "C" fn echo_arguments(
    _: *mut c_void,
    args: *const c_char,
    len: usize,
    call: *mut ferromcp_call,
) {
    // SAFETY: `args` is NUL-terminated JSON of `len` bytes.
    let text = unsafe { CStr::from_ptr(args) };
    assert_eq!(text.to_bytes().len(), len);
    // SAFETY: uncompleted handle, valid JSON text.
    let status = unsafe { ferromcp_call_respond(call, args) };
    assert_eq!(status, ferromcp_status::FERROMCP_OK);
}

unsafe extern "C" fn sum(_: *mut c_void, args: *const c_char, _: usize, call: *mut ferromcp_call) {
    // SAFETY: valid JSON text from ferromcp.
    let args: Value =
        serde_json::from_slice(unsafe { CStr::from_ptr(args) }.to_bytes()).expect("JSON");
    let total = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
    let text = CString::new(total.to_string()).expect("no NUL");
    // SAFETY: uncompleted handle.
    unsafe { ferromcp_call_respond(call, text.as_ptr()) };
}

struct CallPtr(*mut ferromcp_call);
// SAFETY: call handles may be completed from any thread.
unsafe impl Send for CallPtr {}

unsafe extern "C" fn later(_: *mut c_void, _: *const c_char, _: usize, call: *mut ferromcp_call) {
    let call = CallPtr(call);
    std::thread::spawn(move || {
        let call = call;
        std::thread::sleep(Duration::from_millis(50));
        // SAFETY: uncompleted handle moved to this thread.
        assert!(!unsafe { ferromcp_call_is_cancelled(call.0) });
        // SAFETY: as above.
        let status = unsafe { ferromcp_call_respond(call.0, c"\"done later\"".as_ptr()) };
        assert_eq!(status, ferromcp_status::FERROMCP_OK);
    });
}

unsafe extern "C" fn failing(_: *mut c_void, _: *const c_char, _: usize, call: *mut ferromcp_call) {
    // SAFETY: uncompleted handle.
    unsafe { ferromcp_call_fail(call, c"ValueError: boom".as_ptr()) };
}

static BAD_JSON_STATUS: AtomicI32 = AtomicI32::new(-1);

unsafe extern "C" fn bad_json(
    _: *mut c_void,
    _: *const c_char,
    _: usize,
    call: *mut ferromcp_call,
) {
    // SAFETY: uncompleted handle.
    let status = unsafe { ferromcp_call_respond(call, c"{not json".as_ptr()) };
    BAD_JSON_STATUS.store(status as i32, Ordering::SeqCst);
}

unsafe extern "C" fn null_json(
    _: *mut c_void,
    _: *const c_char,
    _: usize,
    call: *mut ferromcp_call,
) {
    // SAFETY: uncompleted handle; NULL is a documented input.
    unsafe { ferromcp_call_respond(call, ptr::null()) };
}

unsafe extern "C" fn full_result(
    _: *mut c_void,
    _: *const c_char,
    _: usize,
    call: *mut ferromcp_call,
) {
    let result =
        c"{\"content\":[{\"type\":\"text\",\"text\":\"custom\"}],\"structuredContent\":{\"n\":7}}";
    // SAFETY: uncompleted handle.
    unsafe { ferromcp_call_respond_result(call, result.as_ptr()) };
}

unsafe extern "C" fn result_not_object(
    _: *mut c_void,
    _: *const c_char,
    _: usize,
    call: *mut ferromcp_call,
) {
    // SAFETY: uncompleted handle.
    unsafe { ferromcp_call_respond_result(call, c"[1]".as_ptr()) };
}

static NESTED_SERVE_STATUS: AtomicI32 = AtomicI32::new(-1);
static NESTED_SERVER: Mutex<usize> = Mutex::new(0);

unsafe extern "C" fn serve_from_callback(
    _: *mut c_void,
    _: *const c_char,
    _: usize,
    call: *mut ferromcp_call,
) {
    let server = *NESTED_SERVER.lock().expect("lock") as *const ferromcp_server;
    // SAFETY: the server outlives the request.
    let status = unsafe { ferromcp_server_serve_stdio(server) };
    NESTED_SERVE_STATUS.store(status as i32, Ordering::SeqCst);
    // SAFETY: uncompleted handle.
    unsafe { ferromcp_call_respond(call, c"null".as_ptr()) };
}

/// Meets `needed` concurrent invocations before answering: proves callbacks
/// run on more threads than the runtime has workers.
static MEETING: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());
static MEETING_SIZE: AtomicUsize = AtomicUsize::new(usize::MAX);

unsafe extern "C" fn meet(_: *mut c_void, _: *const c_char, _: usize, call: *mut ferromcp_call) {
    let (lock, arrived) = &MEETING;
    let mut count = lock.lock().expect("lock");
    *count += 1;
    arrived.notify_all();
    let needed = MEETING_SIZE.load(Ordering::SeqCst);
    let (count, _) = arrived
        .wait_timeout_while(count, Duration::from_secs(10), |c| *c < needed)
        .expect("lock");
    let answer = if *count >= needed {
        c"\"met\""
    } else {
        c"\"alone\""
    };
    drop(count);
    // SAFETY: uncompleted handle.
    unsafe { ferromcp_call_respond(call, answer.as_ptr()) };
}

/// What a callback saw after its client gave up: (cancelled?, respond status).
static AFTER_CANCEL: Mutex<Option<(bool, ferromcp_status)>> = Mutex::new(None);

unsafe extern "C" fn wait_for_cancel(
    _: *mut c_void,
    _: *const c_char,
    _: usize,
    call: *mut ferromcp_call,
) {
    let deadline = Instant::now() + Duration::from_secs(10);
    // SAFETY: uncompleted handle (all three calls).
    while !unsafe { ferromcp_call_is_cancelled(call) } && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let cancelled = unsafe { ferromcp_call_is_cancelled(call) };
    let status = unsafe { ferromcp_call_respond(call, c"\"too late\"".as_ptr()) };
    *AFTER_CANCEL.lock().expect("lock") = Some((cancelled, status));
}

static FINALIZED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_finalizer(userdata: *mut c_void) {
    FINALIZED.fetch_add(1, Ordering::SeqCst);
    // SAFETY: userdata was made by Box::into_raw in the test.
    drop(unsafe { Box::from_raw(userdata.cast::<u64>()) });
}

// ---- tests ----

#[test]
fn tool_results_errors_and_recovery_over_http() {
    let server = OwnedServer::new();
    server.add(c"echo_arguments", None, Some(echo_arguments));
    server.add(
        c"sum",
        Some(c"{\"type\":\"object\",\"properties\":{\"result\":{\"type\":\"integer\"}}}"),
        Some(sum),
    );
    server.add(c"later", None, Some(later));
    server.add(c"failing", None, Some(failing));
    server.add(c"bad_json", None, Some(bad_json));
    server.add(c"null_json", None, Some(null_json));
    server.add(c"full_result", None, Some(full_result));
    server.add(c"result_not_object", None, Some(result_not_object));

    with_http_server(&server, |client, _| {
        let r = call(
            client,
            "echo_arguments",
            json!({"text": "héllo", "n": [1, 2]}),
        );
        assert_eq!(
            texts(&r),
            vec![r#"{"n":[1,2],"text":"héllo"}"#.to_owned()],
            "{r}"
        );
        assert_ne!(r["isError"], json!(true));

        let r = call(client, "sum", json!({"a": 2, "b": 3}));
        assert_eq!(r["structuredContent"], json!({"result": 5}), "{r}");
        assert_eq!(texts(&r), vec!["5".to_owned()]);

        let r = call(client, "later", json!({}));
        assert_eq!(texts(&r), vec!["done later".to_owned()], "{r}");

        let r = call(client, "failing", json!({}));
        assert_eq!(r["isError"], json!(true), "{r}");
        assert_eq!(texts(&r), vec!["ValueError: boom".to_owned()]);

        let r = call(client, "bad_json", json!({}));
        assert_eq!(r["isError"], json!(true), "{r}");
        assert!(texts(&r)[0].contains("invalid JSON"), "{r}");
        // The server keeps answering after a failing handler.
        let r = call(client, "echo_arguments", json!({"after": true}));
        assert_eq!(texts(&r), vec![r#"{"after":true}"#.to_owned()], "{r}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while BAD_JSON_STATUS.load(Ordering::SeqCst) == -1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(
            BAD_JSON_STATUS.load(Ordering::SeqCst),
            ferromcp_status::FERROMCP_INVALID_JSON as i32
        );

        let r = call(client, "null_json", json!({}));
        assert_eq!(r["isError"], json!(true), "{r}");

        let r = call(client, "full_result", json!({}));
        assert_eq!(texts(&r), vec!["custom".to_owned()], "{r}");
        assert_eq!(r["structuredContent"], json!({"n": 7}));

        let r = call(client, "result_not_object", json!({}));
        assert_eq!(r["isError"], json!(true), "{r}");
        assert!(texts(&r)[0].contains("CallToolResult"), "{r}");
    });
}

#[test]
fn a_client_that_gives_up_is_seen_as_cancelled() {
    let server = OwnedServer::new();
    server.add(c"wait_for_cancel", None, Some(wait_for_cancel));
    server.add(c"sum", None, Some(sum));
    with_http_server(&server, |client, _| {
        let gave_up = ferromcp_core::runtime::get().block_on(async {
            let call = client.call_tool("wait_for_cancel", json!({}));
            tokio::time::timeout(Duration::from_millis(200), call).await
        });
        assert!(gave_up.is_err(), "the call is still running");
        let deadline = Instant::now() + Duration::from_secs(10);
        let seen = loop {
            if let Some(seen) = *AFTER_CANCEL.lock().expect("lock") {
                break seen;
            }
            assert!(
                Instant::now() < deadline,
                "callback never saw the cancellation"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(seen, (true, ferromcp_status::FERROMCP_REQUEST_CANCELLED));
        let r = call(client, "sum", json!({"a": 1, "b": 2}));
        assert_eq!(texts(&r), vec!["3".to_owned()]);
    });
}

#[test]
fn callbacks_run_off_the_runtime_workers() {
    let server = OwnedServer::new();
    server.add(c"meet", None, Some(meet));
    // More meetings than worker threads: if callbacks ran on workers they
    // could never all be in progress at once.
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    let needed = workers + 2;
    MEETING_SIZE.store(needed, Ordering::SeqCst);
    with_http_server(&server, |client, _| {
        let answers = ferromcp_core::runtime::get().block_on(async {
            let calls = (0..needed).map(|_| {
                let client = client.clone();
                async move { client.call_tool("meet", json!({})).await }
            });
            join_all(calls).await
        });
        for answer in answers {
            let answer = serde_json::to_value(answer.expect("tools/call")).expect("serialises");
            assert_eq!(texts(&answer), vec!["met".to_owned()], "{answer}");
        }
    });
}

/// Joins futures without an extra dependency: spawn each on the runtime.
async fn join_all<F>(futures: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        out.push(handle.await.expect("task"));
    }
    out
}

#[test]
fn serving_from_a_callback_or_twice_is_refused() {
    let server = OwnedServer::new();
    *NESTED_SERVER.lock().expect("lock") = server.0 as usize;
    server.add(c"nested", None, Some(serve_from_callback));
    with_http_server(&server, |client, _| {
        // SAFETY: live server.
        let second = unsafe { ferromcp_server_serve_http(server.0, c"127.0.0.1".as_ptr(), 0) };
        assert_eq!(second, ferromcp_status::FERROMCP_INVALID_STATE);
        assert!(last_error().contains("already serving"));
        let r = call(client, "nested", json!({}));
        assert_eq!(r["content"], json!([]), "{r}");
    });
    assert_eq!(
        NESTED_SERVE_STATUS.load(Ordering::SeqCst),
        ferromcp_status::FERROMCP_INVALID_STATE as i32
    );
}

#[test]
fn shutdown_releases_the_port_and_serving_can_resume() {
    let server = OwnedServer::new();
    server.add(c"sum", None, Some(sum));
    let first_port = with_http_server(&server, |client, port| {
        let r = call(client, "sum", json!({"a": 1, "b": 1}));
        assert_eq!(texts(&r), vec!["2".to_owned()]);
        port
    });
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", first_port)).is_err(),
        "port released"
    );
    let mut port = 0u16;
    // SAFETY: live server, valid out pointer.
    let status = unsafe { ferromcp_server_http_port(server.0, &mut port) };
    assert_eq!(status, ferromcp_status::FERROMCP_INVALID_STATE);
    with_http_server(&server, |client, _| {
        let r = call(client, "sum", json!({"a": 2, "b": 2}));
        assert_eq!(texts(&r), vec!["4".to_owned()]);
    });
}

#[test]
fn finalizer_runs_once_and_never_after_a_failed_registration() {
    let before = FINALIZED.load(Ordering::SeqCst);
    let server = OwnedServer::new();
    let userdata = Box::into_raw(Box::new(7u64)).cast::<c_void>();
    let status = server.add_with(c"t", None, Some(sum), userdata, Some(count_finalizer));
    assert_eq!(status, ferromcp_status::FERROMCP_OK);

    let rejected = Box::into_raw(Box::new(8u64)).cast::<c_void>();
    // SAFETY: live server and valid strings; the schema is not JSON Schema.
    let status = unsafe {
        ferromcp_server_add_tool(
            server.0,
            c"bad".as_ptr(),
            ptr::null(),
            c"{\"type\":12}".as_ptr(),
            ptr::null(),
            Some(sum),
            rejected,
            Some(count_finalizer),
        )
    };
    assert_eq!(
        status,
        ferromcp_status::FERROMCP_INVALID_DEFINITION,
        "{}",
        last_error()
    );
    assert_eq!(FINALIZED.load(Ordering::SeqCst), before);
    // SAFETY: registration failed, so the box is still ours.
    drop(unsafe { Box::from_raw(rejected.cast::<u64>()) });

    drop(server);
    assert_eq!(FINALIZED.load(Ordering::SeqCst), before + 1);
}

#[test]
fn null_arguments_are_errors_not_crashes() {
    let sentinel = ptr::dangling_mut::<ferromcp_server>();
    let mut out = sentinel;
    // SAFETY: NULL inputs are documented as checked.
    unsafe {
        assert_eq!(
            ferromcp_server_new(ptr::null(), c"1".as_ptr(), &mut out),
            ferromcp_status::FERROMCP_NULL_ARGUMENT
        );
        assert_eq!(
            ferromcp_server_new(c"n".as_ptr(), c"1".as_ptr(), ptr::null_mut()),
            ferromcp_status::FERROMCP_NULL_ARGUMENT
        );
        assert_eq!(out, sentinel, "output untouched on failure");
        assert_eq!(
            ferromcp_call_respond(ptr::null_mut(), c"1".as_ptr()),
            ferromcp_status::FERROMCP_NULL_ARGUMENT
        );
        assert_eq!(
            ferromcp_call_fail(ptr::null_mut(), ptr::null()),
            ferromcp_status::FERROMCP_NULL_ARGUMENT
        );
        assert!(!ferromcp_call_is_cancelled(ptr::null()));
        assert_eq!(
            ferromcp_server_shutdown(ptr::null()),
            ferromcp_status::FERROMCP_NULL_ARGUMENT
        );
        ferromcp_server_free(ptr::null_mut());
    }
    let server = OwnedServer::new();
    assert_eq!(
        server.add_with(c"t", None, None, ptr::null_mut(), None),
        ferromcp_status::FERROMCP_NULL_ARGUMENT
    );
    assert!(last_error().contains("callback"));
}

#[test]
fn nonblocking_callbacks_run_in_place_and_unknown_flags_are_refused() {
    let server = OwnedServer::new();
    // SAFETY: live server, valid strings.
    let status = unsafe {
        crate::ferromcp_server_add_tool_ex(
            server.0,
            c"sum".as_ptr(),
            ptr::null(),
            OBJECT.as_ptr(),
            ptr::null(),
            crate::FERROMCP_TOOL_NONBLOCKING,
            Some(sum),
            ptr::null_mut(),
            None,
        )
    };
    assert_eq!(status, ferromcp_status::FERROMCP_OK);
    // SAFETY: as above.
    let refused = unsafe {
        crate::ferromcp_server_add_tool_ex(
            server.0,
            c"other".as_ptr(),
            ptr::null(),
            OBJECT.as_ptr(),
            ptr::null(),
            0x80,
            Some(sum),
            ptr::null_mut(),
            None,
        )
    };
    assert_eq!(refused, ferromcp_status::FERROMCP_INVALID_ARGUMENT);
    assert!(last_error().contains("unknown flags"), "{}", last_error());
    with_http_server(&server, |client, _| {
        let r = call(client, "sum", json!({"a": 40, "b": 2}));
        assert_eq!(texts(&r), vec!["42".to_owned()]);
    });
}
