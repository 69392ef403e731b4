//! `tool_base.h`: the global tool registry.
//!
//! One singly linked list with a head node that holds no tool, plus the tools
//! array offered to the model. Ownership: a node owns its `ret.messages`; its
//! `tool_obj` is owned by the node until `build_tools_json` moves it into the
//! array (a tool appended after that joins the array at once).
//!
//! Who may change it: while the agent loop runs, the registry belongs to the
//! loop thread ([`set_owner`]; it registers the tools in `init_tools`, and
//! its requests serialise the array). The loop reads it without a lock while
//! it builds the agent, answers a message and tears the agent down; then
//! the registry is in use ([`IN_USE`]) and `append_tool` from any other
//! thread does not touch it: the tool waits in the registry's queue, under a
//! lock, and the loop adds it when its turn is over, before it waits for the
//! next message ([`owner_waits`]). While the loop waits, the registry is
//! free: the thread that queued a tool takes it and registers the queue at
//! once, so an MCP client sees the tool without anyone chatting. Either way
//! no turn sees the tools array change: a tool is offered to the model from
//! the next message on. Without a running loop the caller owns the registry,
//! as in the C package.
//!
//! The tool lock ([`lock_tools`], see `super::tool_run`) is made with the
//! registry and deleted with it: whoever runs a tool (the loop, the MCP
//! server) takes it, with or without a running loop.
//!
//! Whoever changes it, the change happens under [`REGISTRY_LOCK`], which
//! exists with or without an agent; a request holds the same lock from the
//! count of its body to the end of its write, so a `chat()` on one thread
//! sends the tools array whole while `append_tool` runs on another (the
//! tool joins the next request).

use crate::abi::messages::{messages_create, messages_destroy};
use crate::cjson::json;
use crate::cjson::sys::{cJSON, cJSON_CreateArray, cJSON_Delete};
use crate::rtt::atomic::{AtomicBool, AtomicPtr, Ordering};
use crate::rtt::gate::{Gate, Pass};
use crate::rtt::ipc::{Mutex, MutexGuard};
use crate::rtt::name::ObjectName;
use crate::rtt::sleep_lock::{SleepLock, SleepLockGuard};
use crate::rtt::thread;
use crate::rtt::*;
use core::cell::UnsafeCell;
use core::ffi::{c_void, CStr};
use core::mem::size_of;
use core::ptr;

pub use super::ability::Native;
pub use super::c_objects::{
    AgentToolList, AgentToolNode, AgentToolNode_t, AgentToolRet, AgentToolRet_t, ExecuteFn,
};

/// Run an ability's own tool for `node` and give the node its result:
/// the one place the library writes a tool's result. The answer goes in as
/// the node's one message; one that ran out of memory gives the tool's
/// `no_memory` text instead. `RT_EOK` when the tool succeeded and its
/// whole answer was kept, else `RT_ERROR`.
///
/// # Safety
/// `node` is a live node of the registry, under the tool lock; `args` NULL
/// or a live object, borrowed.
pub unsafe fn run_native(node: *mut AgentToolList, args: *mut cJSON, native: &Native) {
    let mut out = crate::base::text_buf::TextBuf::new();
    // SAFETY: as this function's contract says.
    let ok = unsafe { (native.run)(node, args, &mut out) };
    if out.oom {
        crate::log_e!("no memory for a tool's result");
    }
    // SAFETY: a live node (contract).
    unsafe { set_result(node, out, ok, native.no_memory) };
}

/// The `execute_func` of the abilities' own tools (`append_native`), for
/// C code that calls a node's function itself; the library's dispatch
/// finds the tool through the abilities without it.
///
/// # Safety
/// As every tool's execute function: `args` NULL or a live object, `node`
/// NULL or a live node of the registry.
pub unsafe extern "C" fn native_entry(args: *mut cJSON, node: *mut AgentToolList) {
    crate::ffi_fn!(failure = (), nonnull(node), {
        // SAFETY: forwarded: `node` non-NULL and live, `args` NULL or live.
        match unsafe { super::ability::native_tool(node) } {
            // SAFETY: as above.
            Some(native) => unsafe { run_native(node, args, native) },
            None => {
                let mut out = crate::base::text_buf::TextBuf::new();
                out.push_str("error: no part of the agent runs this tool now");
                // SAFETY: as above.
                unsafe { set_result(node, out, false, crate::abi::messages::OUT_OF_MEMORY_TEXT) };
            }
        }
    })
}

/// Whether `node` is an ability's own tool, registered with
/// [`append_native`] (its hook then says whose).
///
/// # Safety
/// `node` is a live node of the registry.
pub unsafe fn is_native(node: *mut AgentToolList) -> bool {
    // SAFETY: a live node (contract), read only.
    unsafe { (*node).execute_func }.is_some_and(|f| {
        core::ptr::fn_addr_eq(
            f,
            native_entry as unsafe extern "C" fn(*mut cJSON, *mut AgentToolList),
        )
    })
}

/// Register an ability's own tool: [`append_tool`] with [`native_entry`]
/// as its function; the ability's `native_tool` hook runs it.
///
/// # Safety
/// As [`append_tool`]'s: `tool_obj` NULL or a detached tree, handed over.
pub unsafe fn append_native(tool_obj: *mut cJSON) -> rt_err_t {
    // SAFETY: forwarded (the caller's contract is append_tool's).
    unsafe { append_tool(tool_obj, Some(native_entry)) }
}

/// Give `node` a result as a C tool gives its own: `text` as the node's one
/// message, or `no_memory` when the text ran out of memory; RT_EOK when
/// `ok` and the whole text was kept, else RT_ERROR. The node's old result
/// is freed. For [`run_native`] (and [`native_entry`]'s refusal) alone.
///
/// # Safety
/// `node` is a live node of the registry.
unsafe fn set_result(
    node: *mut AgentToolList,
    text: crate::base::text_buf::TextBuf,
    ok: bool,
    no_memory: &CStr,
) {
    let whole = !text.oom;
    let messages = if whole {
        crate::abi::messages::message_of(text)
    } else {
        crate::abi::messages::text_message(no_memory)
    };
    if messages.is_null() {
        crate::log_e!("no memory for a tool's result");
    }
    // SAFETY: a live node (the contract); its old result is its own to
    // free, and it takes the new set.
    unsafe {
        messages_destroy((*node).ret.messages);
        (*node).ret.messages = messages;
        (*node).ret.ret = if ok && whole && !messages.is_null() {
            rt_eok()
        } else {
            rt_error()
        };
    }
}

static HEAD: AtomicPtr<AgentToolList> = AtomicPtr::new(ptr::null_mut());
static TOOLS_ARRAY: AtomicPtr<cJSON> = AtomicPtr::new(ptr::null_mut());

/// Held while the registry (its list and the tools array) changes, and by a
/// request while it counts and writes its body (see the module comment). A
/// writer may therefore wait as long as a request's connection and send
/// take; nothing else waits on it. Taken after the agent's tool lock, never
/// before it.
static REGISTRY_LOCK: SleepLock = SleepLock::new();

/// Hold the registry unchanged until the guard is dropped.
pub(crate) fn lock_registry() -> SleepLockGuard<'static> {
    REGISTRY_LOCK.lock()
}

/// The tool lock: a kernel mutex (priority inheritance, recursive for its
/// holder) made by `agent_tool_list_create` and deleted by
/// `agent_tool_list_destroy`, behind a gate so that nobody takes it while
/// it is deleted.
struct ToolLock {
    gate: Gate,
    /// Written only with the gate closed and empty.
    mutex: UnsafeCell<Option<Mutex>>,
}

// SAFETY: `mutex` is written only while the gate is closed and empty, and
// read only with a pass of the open gate (see `lock_tools`).
unsafe impl Sync for ToolLock {}

static TOOL_LOCK: ToolLock = ToolLock {
    gate: Gate::closed(),
    mutex: UnsafeCell::new(None),
};

/// The tool lock, held until dropped. (Fields drop in order: the mutex is
/// given back before the pass lets the registry delete it.)
pub(crate) struct ToolsGuard {
    _held: MutexGuard<'static>,
    _pass: Pass<'static>,
}

/// Take the tool lock, waiting for as long as its holder runs a tool;
/// `None` when there is no registry (or it is being destroyed).
pub(crate) fn lock_tools() -> Option<ToolsGuard> {
    let pass = TOOL_LOCK.gate.enter()?;
    // SAFETY: the gate is open only while `mutex` holds the registry's
    // mutex and is not written, and the pass, kept in the guard, holds its
    // deletion back until the guard is dropped.
    let lock = unsafe { (*TOOL_LOCK.mutex.get()).as_ref() }?;
    Some(ToolsGuard {
        _held: lock.lock()?,
        _pass: pass,
    })
}

/// The thread that owns the registry while the agent loop runs (NULL:
/// whoever calls, as in the C package).
static OWNER: AtomicPtr<rt_thread> = AtomicPtr::new(ptr::null_mut());

/// Tools appended by other threads while the owner runs, newest first.
static QUEUED: AtomicPtr<AgentToolList> = AtomicPtr::new(ptr::null_mut());
/// Held while [`QUEUED`] changes (a pointer swap or a push).
static QUEUE_LOCK: SleepLock = SleepLock::new();

/// The registry is in use: by its owner, which reads it without a lock
/// (from [`set_owner`] to [`owner_waits`], and from [`owner_works`] to the
/// next [`owner_waits`] or the end), or by another thread that registers
/// the queued tools while the owner waits for a message. A flag taken with
/// a compare-and-swap, not a kernel object: it exists with or without an
/// agent. Taken before the tool lock, never after it.
static IN_USE: AtomicBool = AtomicBool::new(false);

fn try_take_registry() -> bool {
    IN_USE
        .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// Take the registry, waiting a tick at a time while another thread
/// registers the queued tools (a registration, or as long as a tool the
/// MCP server runs holds the tool lock, as for the loop before).
fn take_registry() {
    while !try_take_registry() {
        thread::sleep_ms(1);
    }
}

/// Register the queued tools (with the registry taken).
fn register_queued() {
    let queued = take_queued();
    if !queued.is_null() {
        let _tools = lock_tools();
        register_chain(queued);
    }
}

/// Register what is queued unless the registry is in use. Whoever uses it
/// calls this again once it has let go, so a tool queued meanwhile (whose
/// thread found the registry in use) is never left for the next message.
fn register_queued_if_free() {
    while !QUEUED.load(Ordering::SeqCst).is_null() && try_take_registry() {
        register_queued();
        IN_USE.store(false, Ordering::SeqCst);
    }
}

/// The loop thread takes the registry (`Some`) or gives it back (`None`:
/// the tools still queued are discarded, as the agent stops). Every `Some`
/// is followed by a `None`, once the owner is done with the registry.
pub(crate) fn set_owner(owner: Option<rt_thread_t>) {
    match owner {
        Some(owner) => {
            take_registry();
            OWNER.store(owner, Ordering::SeqCst);
        }
        None => {
            OWNER.store(ptr::null_mut(), Ordering::SeqCst);
            discard_chain(take_queued());
            IN_USE.store(false, Ordering::SeqCst);
        }
    }
}

/// The owner is done with its turn (or its start) and waits for a message:
/// what was queued meanwhile is registered now, and until [`owner_works`]
/// other threads register their tools at once.
pub(crate) fn owner_waits() {
    IN_USE.store(false, Ordering::SeqCst);
    register_queued_if_free();
}

/// The owner took a message: the registry is its own again (a registration
/// in progress ends first), with whatever was queued.
pub(crate) fn owner_works() {
    take_registry();
    register_queued();
}

/// The queued tools, oldest last, for [`register_chain`].
fn take_queued() -> AgentToolNode_t {
    let _held = QUEUE_LOCK.lock();
    QUEUED.swap(ptr::null_mut(), Ordering::SeqCst)
}

/// Nodes after the head, in registration order.
pub(crate) fn nodes() -> impl Iterator<Item = AgentToolNode_t> {
    let head = HEAD.load(Ordering::Acquire);
    let mut next = if head.is_null() {
        ptr::null_mut()
    } else {
        // SAFETY: nodes are freed only by agent_tool_list_destroy, run by
        // the registry's owner (see the module comment), never during a walk.
        unsafe { (*head).next }
    };
    core::iter::from_fn(move || {
        if next.is_null() {
            return None;
        }
        let cur = next;
        // SAFETY: `cur` is a linked, live node: nodes are freed only by
        // agent_tool_list_destroy, run by the registry's owner, never during
        // a walk.
        next = unsafe { (*cur).next };
        Some(cur)
    })
}

/// `obj.function.name`, the shape shared by tool definitions and tool calls.
///
/// # Safety
/// `obj` is NULL or a live cJSON item.
pub(crate) unsafe fn function_name<'a>(obj: *const cJSON) -> Option<&'a CStr> {
    // SAFETY: `obj` is NULL or a live cJSON item (this function's contract);
    // `get` returns NULL or a child of it, live as long as `obj`.
    unsafe { json::get_str(json::get(obj, c"function"), c"name") }
}

/// Create the (empty) registry. Idempotent: `RT_EOK` when it already exists.
/// `-RT_ENOMEM` when the head node cannot be allocated.
pub fn agent_tool_list_create() -> rt_err_t {
    if !HEAD.load(Ordering::Acquire).is_null() {
        return rt_eok();
    }
    if !TOOL_LOCK.gate.is_open() {
        let Some(mutex) = Mutex::create(ObjectName::short(c"AgentTl")) else {
            return -rt_enomem();
        };
        // SAFETY: the gate is closed, and empty (destroy waits for that
        // before it returns), so nobody reads `mutex`.
        unsafe { *TOOL_LOCK.mutex.get() = Some(mutex) };
        TOOL_LOCK.gate.open();
    }
    // SAFETY: fresh NULL-checked allocation, initialised before publishing.
    unsafe {
        let head = rt_malloc(size_of::<AgentToolList>()) as AgentToolNode_t;
        if head.is_null() {
            return -rt_enomem();
        }
        head.write(AgentToolList {
            tool_obj: ptr::null_mut(),
            ret: AgentToolRet {
                ret: rt_eok(),
                messages: ptr::null_mut(),
            },
            execute_func: None,
            next: ptr::null_mut(),
        });
        HEAD.store(head, Ordering::Release);
    }
    rt_eok()
}

/// Register a tool: `tool_obj` is its definition (from `create_tool_item`),
/// `execute_func` runs it.
///
/// Takes ownership of `tool_obj` in every case (it is deleted on failure, so
/// registration code that ignores the result leaks nothing). Returns `RT_EOK`;
/// `RT_ERROR` (positive) if the registry was not created, an argument is NULL,
/// the definition has no `function.name`, a tool of that name is already
/// registered, or memory ran out.
///
/// While the agent loop runs, a call from another thread queues the tool and
/// returns `RT_EOK` (or `RT_ERROR` without memory); it is registered with
/// the same checks (a refusal is logged) at once while the loop waits for a
/// message, else as soon as the loop's turn is over.
pub unsafe fn append_tool(
    tool_obj: *mut cJSON,
    execute_func: Option<unsafe extern "C" fn(param: *mut cJSON, node: *mut AgentToolList)>,
) -> rt_err_t {
    let owner = OWNER.load(Ordering::SeqCst);
    if owner.is_null() || owner == thread::current() {
        return register_now(tool_obj, execute_func);
    }
    let rc = {
        let _held = QUEUE_LOCK.lock();
        let mut chain = QUEUED.load(Ordering::SeqCst);
        let rc = queue_tool(&mut chain, tool_obj, execute_func);
        QUEUED.store(chain, Ordering::SeqCst);
        rc
    };
    register_queued_if_free();
    rc
}

/// Put a tool on `chain` (newest first), for the loop to register later.
fn queue_tool(
    chain: &mut AgentToolNode_t,
    tool_obj: *mut cJSON,
    execute_func: Option<ExecuteFn>,
) -> rt_err_t {
    // SAFETY: a plain allocation, NULL-checked before use.
    let node = unsafe { rt_malloc(size_of::<AgentToolList>()) } as AgentToolNode_t;
    if node.is_null() {
        crate::log_w!("append_tool: out of memory");
        // SAFETY: `tool_obj` is NULL or a detached tree handed over by the
        // caller (append_tool's contract).
        unsafe { cJSON_Delete(tool_obj) };
        return rt_error();
    }
    // SAFETY: `node` is a fresh block of the node's size; `*chain` is the
    // caller's chain, which the new node now heads.
    unsafe {
        node.write(AgentToolList {
            tool_obj,
            ret: AgentToolRet {
                ret: rt_error(),
                messages: ptr::null_mut(),
            },
            execute_func,
            next: *chain,
        })
    };
    *chain = node;
    rt_eok()
}

/// Reverse a chain made by [`queue_tool`] (newest first) to oldest first.
fn oldest_first(mut node: AgentToolNode_t) -> AgentToolNode_t {
    let mut reversed: AgentToolNode_t = ptr::null_mut();
    while !node.is_null() {
        // SAFETY: a node of a chain handed over to the caller.
        unsafe {
            let next = (*node).next;
            (*node).next = reversed;
            reversed = node;
            node = next;
        }
    }
    reversed
}

/// Register the tools of a queued chain in the order they were appended and
/// free the chain (with the registry taken).
fn register_chain(chain: AgentToolNode_t) {
    let mut node = oldest_first(chain);
    while !node.is_null() {
        // SAFETY: chain nodes were allocated by queue_tool and are owned here.
        unsafe {
            let next = (*node).next;
            register_now((*node).tool_obj, (*node).execute_func);
            rt_free(node as *mut c_void);
            node = next;
        }
    }
}

/// Free a queued chain with its tool definitions (the agent is stopping).
fn discard_chain(mut node: AgentToolNode_t) {
    while !node.is_null() {
        // SAFETY: chain nodes were allocated by queue_tool and are owned
        // here, each with its detached definition.
        unsafe {
            let next = (*node).next;
            cJSON_Delete((*node).tool_obj);
            rt_free(node as *mut c_void);
            node = next;
        }
    }
}

fn register_now(tool_obj: *mut cJSON, execute_func: Option<ExecuteFn>) -> rt_err_t {
    {
        let _registry = lock_registry();
        // SAFETY: `tool_obj` is a detached cJSON tree handed over by the caller;
        // nodes come from the registry's own allocations.
        unsafe {
            let refuse = |why: &str| {
                crate::log_w!("append_tool: ", why);
                cJSON_Delete(tool_obj);
                rt_error()
            };
            let head = HEAD.load(Ordering::Acquire);
            if head.is_null() {
                return refuse("tool list not created (call agent_tool_list_create first)");
            }
            let Some(execute_func) = execute_func else {
                return refuse("no execute function");
            };
            let Some(name) = function_name(tool_obj) else {
                return refuse("tool definition has no function.name");
            };
            if nodes().any(|n| function_name((*n).tool_obj) == Some(name)) {
                crate::log_w!("append_tool: tool '", name, "' is already registered");
                cJSON_Delete(tool_obj);
                return rt_error();
            }
            let node = rt_malloc(size_of::<AgentToolList>()) as AgentToolNode_t;
            if node.is_null() {
                return refuse("out of memory");
            }
            let messages = messages_create(0);
            if messages.is_null() {
                rt_free(node as *mut c_void);
                return refuse("out of memory");
            }
            node.write(AgentToolList {
                tool_obj,
                ret: AgentToolRet {
                    ret: rt_error(),
                    messages,
                },
                execute_func: Some(execute_func),
                next: ptr::null_mut(),
            });
            let mut tail = head;
            while !(*tail).next.is_null() {
                tail = (*tail).next;
            }
            // Fix of the C package: once the array exists, a late tool joins it
            // too, so the model is offered every tool that can be called.
            let array = TOOLS_ARRAY.load(Ordering::Acquire);
            if !array.is_null() {
                crate::cjson::sys::cJSON_AddItemToArray(array, tool_obj);
            }
            (*tail).next = node;
            rt_eok()
        }
    }
}

/// The array of every registered tool definition, in registration order, to
/// send to the model. Built on the first call and returned as is afterwards;
/// the definitions move into it. The registry keeps ownership of the array
/// (freed by `agent_tool_list_destroy`). `RT_NULL` before the registry exists
/// or on no memory.
pub fn build_tools_json() -> *mut cJSON {
    let _registry = lock_registry();
    let existing = TOOLS_ARRAY.load(Ordering::Acquire);
    if !existing.is_null() {
        return existing;
    }
    if HEAD.load(Ordering::Acquire).is_null() {
        return ptr::null_mut();
    }
    // SAFETY: every node's tool_obj is a detached tree owned by the node;
    // adding it to the array transfers that ownership.
    unsafe {
        let array = cJSON_CreateArray();
        if array.is_null() {
            return ptr::null_mut();
        }
        for node in nodes() {
            crate::cjson::sys::cJSON_AddItemToArray(array, (*node).tool_obj);
        }
        TOOLS_ARRAY.store(array, Ordering::Release);
        array
    }
}

/// The array built by `build_tools_json`, owned by the registry; `RT_NULL`
/// before it is built.
pub fn get_agent_tools() -> *mut cJSON {
    TOOLS_ARRAY.load(Ordering::Acquire)
}

/// Find the registered tool named by `tool_obj.function.name` (a tool
/// definition and a tool call both have that shape). Borrows `tool_obj`.
/// Returns the registry's node (not owned by the caller), or `RT_NULL` when
/// absent or when `tool_obj` is malformed.
pub unsafe fn search_agent_tool_node(tool_obj: *mut cJSON) -> AgentToolNode_t {
    // SAFETY: `tool_obj` is NULL or live (caller's contract); nodes are live.
    unsafe {
        let Some(wanted) = function_name(tool_obj) else {
            return ptr::null_mut();
        };
        nodes()
            .find(|&n| function_name((*n).tool_obj) == Some(wanted))
            .unwrap_or(ptr::null_mut())
    }
}

/// Free `node` and its `ret.messages`, never its `tool_obj`. NULL-safe. The
/// node must no longer be linked in the registry.
pub unsafe fn free_agent_tool_node(node: AgentToolNode_t) {
    if node.is_null() {
        return;
    }
    // SAFETY: the caller gives up a node allocated by the registry.
    unsafe {
        messages_destroy((*node).ret.messages);
        rt_free(node as *mut c_void);
    }
}

/// Free every node with its leftover messages, the tools array (and with it
/// every definition), and the head. Afterwards the registry can be created
/// again. NULL-safe when nothing was created.
pub fn agent_tool_list_destroy() {
    // Whoever runs a tool finishes first; then the tool lock goes.
    if TOOL_LOCK.gate.close() {
        TOOL_LOCK.gate.wait_empty(|| {});
        // SAFETY: the gate is closed and empty: nobody reads `mutex`.
        drop(unsafe { (*TOOL_LOCK.mutex.get()).take() });
    }
    // A request writing the array finishes first.
    let _registry = lock_registry();
    super::ability::each(|a| a.registry_gone, |gone| gone());
    let head = HEAD.swap(ptr::null_mut(), Ordering::AcqRel);
    let array = TOOLS_ARRAY.swap(ptr::null_mut(), Ordering::AcqRel);
    if head.is_null() {
        if !array.is_null() {
            // SAFETY: the array is the registry's own.
            unsafe { cJSON_Delete(array) };
        }
        return;
    }
    // SAFETY: the registry was unpublished above; every node and
    // definition is freed exactly once (definitions through the array when
    // it was built, else one by one).
    unsafe {
        let mut node = (*head).next;
        while !node.is_null() {
            let next = (*node).next;
            if array.is_null() {
                cJSON_Delete((*node).tool_obj);
            }
            free_agent_tool_node(node);
            node = next;
        }
        if !array.is_null() {
            cJSON_Delete(array);
        }
        free_agent_tool_node(head);
    }
}
