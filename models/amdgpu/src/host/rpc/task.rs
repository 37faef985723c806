//! One resumable state machine per opcode: what the server does on a port
//! between its opening and its closing.

use std::collections::VecDeque;

use super::error::RpcError;
use super::link::{Geometry, Link, Packets, RecvN};
use super::opcode::Opcode;
use super::printf;
use super::services::{GpuAddr, HostServices, OutputStream, RpcMemory};

/// Whether a task finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Progress {
    /// Waiting for the client; poll again later.
    Pending,
    /// Served; the port can be closed.
    Done,
}

/// Everything a step may use.
pub(crate) struct Ctx<'a> {
    pub g: Geometry,
    pub mem: &'a dyn RpcMemory,
    pub host: &'a mut dyn HostServices,
    /// Largest byte string one lane may send.
    pub limit: u64,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum Task {
    /// NOOP: one receive.
    Noop,
    /// EXIT / ABORT: receive, send (the handshake), receive the status.
    Exit { stage: u8 },
    /// WRITE_*: optional stream packet, the bytes, then the count written.
    Write {
        streams: Option<Vec<OutputStream>>,
        data: RecvN,
        reply: Option<Packets>,
    },
    /// MALLOC: receive sizes, send addresses.
    Malloc { reply: Option<Packets> },
    /// FREE: receive addresses.
    Free,
    /// PRINTF_*.
    Printf(Box<PrintfTask>),
}

fn fixed_streams(opcode: Opcode, lanes: u32) -> Option<Vec<OutputStream>> {
    let stream = match opcode {
        Opcode::WRITE_TO_STDERR | Opcode::PRINTF_TO_STDERR | Opcode::PRINTF_TO_STDERR_PACKED => OutputStream::Stderr,
        Opcode::WRITE_TO_STREAM | Opcode::PRINTF_TO_STREAM | Opcode::PRINTF_TO_STREAM_PACKED => return None,
        _ => OutputStream::Stdout,
    };
    Some(vec![stream; lanes as usize])
}

impl Task {
    /// The task for an opcode, or `None` if no handler knows it.
    pub fn for_opcode(opcode: Opcode, lanes: u32) -> Option<Task> {
        Some(match opcode {
            Opcode::NOOP => Task::Noop,
            Opcode::EXIT | Opcode::ABORT => Task::Exit { stage: 0 },
            Opcode::WRITE_TO_STDOUT
            | Opcode::WRITE_TO_STDERR
            | Opcode::WRITE_TO_STREAM
            | Opcode::WRITE_TO_STDOUT_NEWLINE => Task::Write {
                streams: fixed_streams(opcode, lanes),
                data: RecvN::new(lanes),
                reply: None,
            },
            Opcode::MALLOC => Task::Malloc { reply: None },
            Opcode::FREE => Task::Free,
            Opcode::PRINTF_TO_STDOUT
            | Opcode::PRINTF_TO_STDERR
            | Opcode::PRINTF_TO_STREAM
            | Opcode::PRINTF_TO_STDOUT_PACKED
            | Opcode::PRINTF_TO_STDERR_PACKED
            | Opcode::PRINTF_TO_STREAM_PACKED => Task::Printf(Box::new(PrintfTask::new(opcode, lanes))),
            _ => return None,
        })
    }

    /// Runs the task as far as the client's answers allow.
    pub fn advance(&mut self, link: &mut Link, cx: &mut Ctx<'_>) -> Result<Progress, RpcError> {
        match self {
            Task::Noop => Ok(match link.try_recv(&cx.g, cx.mem)? {
                Some(_) => Progress::Done,
                None => Progress::Pending,
            }),
            Task::Exit { stage } => advance_exit(stage, link, cx),
            Task::Write { streams, data, reply } => advance_write(streams, data, reply, link, cx),
            Task::Malloc { reply } => advance_malloc(reply, link, cx),
            Task::Free => advance_free(link, cx),
            Task::Printf(task) => task.advance(link, cx),
        }
    }
}

fn receive_streams(link: &mut Link, cx: &mut Ctx<'_>) -> Result<Option<Vec<OutputStream>>, RpcError> {
    let Some(packets) = link.try_recv(&cx.g, cx.mem)? else {
        return Ok(None);
    };
    let mut streams = vec![OutputStream::Stdout; cx.g.layout.lanes() as usize];
    for lane in link.lanes(&cx.g.layout) {
        let value = packets.word(lane, 0);
        streams[lane as usize] = OutputStream::from_device(value).ok_or(RpcError::BadStream {
            port: link.index,
            opcode: link.opcode,
            lane,
            stream: value,
        })?;
    }
    Ok(Some(streams))
}

fn advance_exit(stage: &mut u8, link: &mut Link, cx: &mut Ctx<'_>) -> Result<Progress, RpcError> {
    loop {
        match *stage {
            0 => {
                if link.try_recv(&cx.g, cx.mem)?.is_none() {
                    return Ok(Progress::Pending);
                }
                *stage = 1;
            }
            1 => {
                if !link.try_send(&cx.g, cx.mem, &Packets::zeroed(cx.g.layout.lanes()))? {
                    return Ok(Progress::Pending);
                }
                *stage = 2;
            }
            _ => {
                let Some(packets) = link.try_recv(&cx.g, cx.mem)? else {
                    return Ok(Progress::Pending);
                };
                if link.opcode == Opcode::ABORT {
                    cx.host.abort();
                } else {
                    let lane = link.lanes(&cx.g.layout).next().unwrap_or(0);
                    cx.host.exit(packets.word(lane, 0) as u32 as i32);
                }
                return Ok(Progress::Done);
            }
        }
    }
}

fn advance_write(
    streams: &mut Option<Vec<OutputStream>>,
    data: &mut RecvN,
    reply: &mut Option<Packets>,
    link: &mut Link,
    cx: &mut Ctx<'_>,
) -> Result<Progress, RpcError> {
    if streams.is_none() {
        match receive_streams(link, cx)? {
            Some(s) => *streams = Some(s),
            None => return Ok(Progress::Pending),
        }
    }
    if reply.is_none() {
        if !data.advance(link, &cx.g, cx.mem, cx.limit)? {
            return Ok(Progress::Pending);
        }
        let mut packets = Packets::zeroed(cx.g.layout.lanes());
        let lanes: Vec<u32> = link.lanes(&cx.g.layout).collect();
        for lane in lanes {
            let stream = streams.as_ref().map_or(OutputStream::Stdout, |s| s[lane as usize]);
            let bytes = &data.data[lane as usize];
            let mut written = match cx.host.write(stream, bytes) {
                Ok(()) => bytes.len() as u64,
                Err(_) => 0,
            };
            if link.opcode == Opcode::WRITE_TO_STDOUT_NEWLINE
                && written == bytes.len() as u64
                && cx.host.write(stream, b"\n").is_ok()
            {
                written += 1;
            }
            packets.set_word(lane, 0, written);
        }
        *reply = Some(packets);
    }
    send_reply(reply, link, cx)
}

fn send_reply(reply: &Option<Packets>, link: &mut Link, cx: &mut Ctx<'_>) -> Result<Progress, RpcError> {
    match reply {
        Some(packets) if link.try_send(&cx.g, cx.mem, packets)? => Ok(Progress::Done),
        _ => Ok(Progress::Pending),
    }
}

fn advance_malloc(reply: &mut Option<Packets>, link: &mut Link, cx: &mut Ctx<'_>) -> Result<Progress, RpcError> {
    if reply.is_none() {
        let Some(request) = link.try_recv(&cx.g, cx.mem)? else {
            return Ok(Progress::Pending);
        };
        let mut packets = Packets::zeroed(cx.g.layout.lanes());
        let lanes: Vec<u32> = link.lanes(&cx.g.layout).collect();
        for lane in lanes {
            let addr = cx.host.malloc(request.word(lane, 0)).map_or(0, |a| a.0);
            packets.set_word(lane, 0, addr);
        }
        *reply = Some(packets);
    }
    send_reply(reply, link, cx)
}

fn advance_free(link: &mut Link, cx: &mut Ctx<'_>) -> Result<Progress, RpcError> {
    let Some(request) = link.try_recv(&cx.g, cx.mem)? else {
        return Ok(Progress::Pending);
    };
    let lanes: Vec<u32> = link.lanes(&cx.g.layout).collect();
    for lane in lanes {
        let addr = request.word(lane, 0);
        if addr == 0 {
            continue;
        }
        cx.host.free(GpuAddr(addr)).map_err(|e| RpcError::BadPointer {
            port: link.index,
            opcode: link.opcode,
            lane,
            addr,
            reason: e.0,
        })?;
    }
    Ok(Progress::Done)
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
enum PrintfStage {
    Streams,
    Format(RecvN),
    SendArgSizes(Packets),
    Args(RecvN),
    RequestStrings(Packets),
    Strings(RecvN),
    SendResult(Packets),
}

/// printf: stream (for *_TO_STREAM), the format, the argument block sized
/// by the server, one round per `%s` string, then the count printed.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct PrintfTask {
    packed: bool,
    streams: Option<Vec<OutputStream>>,
    formats: Vec<Vec<u8>>,
    arg_sizes: Vec<u64>,
    args: Vec<Vec<u8>>,
    pending: Vec<VecDeque<u64>>,
    strings: Vec<Vec<Vec<u8>>>,
    stage: PrintfStage,
}

impl PrintfTask {
    fn new(opcode: Opcode, lanes: u32) -> PrintfTask {
        let streams = fixed_streams(opcode, lanes);
        let stage = if streams.is_none() { PrintfStage::Streams } else { PrintfStage::Format(RecvN::new(lanes)) };
        PrintfTask {
            packed: opcode.0 >= Opcode::PRINTF_TO_STDOUT_PACKED.0,
            streams,
            formats: Vec::new(),
            arg_sizes: vec![0; lanes as usize],
            args: Vec::new(),
            pending: vec![VecDeque::new(); lanes as usize],
            strings: vec![Vec::new(); lanes as usize],
            stage,
        }
    }

    /// The next string request, or `None` when every lane has all its strings.
    fn string_request(&mut self, link: &Link, cx: &Ctx<'_>) -> Option<Packets> {
        if link.lanes(&cx.g.layout).all(|lane| self.pending[lane as usize].is_empty()) {
            return None;
        }
        let mut packets = Packets::zeroed(cx.g.layout.lanes());
        for lane in link.lanes(&cx.g.layout) {
            let ptr = self.pending[lane as usize].pop_front().unwrap_or(0);
            packets.set_word(lane, 1, ptr);
        }
        Some(packets)
    }

    fn print(&mut self, link: &Link, cx: &mut Ctx<'_>) -> Packets {
        let mut packets = Packets::zeroed(cx.g.layout.lanes());
        let lanes: Vec<u32> = link.lanes(&cx.g.layout).collect();
        for lane in lanes {
            let l = lane as usize;
            let stream = self.streams.as_ref().map_or(OutputStream::Stdout, |s| s[l]);
            let printed = match printf::format(&self.formats[l], &self.args[l], &self.strings[l], self.packed) {
                Ok(text) => match cx.host.write(stream, &text) {
                    Ok(()) => text.len() as u64,
                    Err(_) => u64::from(u32::MAX),
                },
                // The device's printf returns -1 and the user reads why on stderr.
                Err(e) => {
                    let _ = cx.host.write(OutputStream::Stderr, format!("dojo: GPU printf from lane {lane}: {e}\n").as_bytes());
                    u64::from(u32::MAX)
                }
            };
            packets.set_word(lane, 0, printed);
        }
        packets
    }

    fn advance(&mut self, link: &mut Link, cx: &mut Ctx<'_>) -> Result<Progress, RpcError> {
        let lanes = cx.g.layout.lanes();
        loop {
            match &mut self.stage {
                PrintfStage::Streams => match receive_streams(link, cx)? {
                    Some(s) => {
                        self.streams = Some(s);
                        self.stage = PrintfStage::Format(RecvN::new(lanes));
                    }
                    None => return Ok(Progress::Pending),
                },
                PrintfStage::Format(recv) => {
                    if !recv.advance(link, &cx.g, cx.mem, cx.limit)? {
                        return Ok(Progress::Pending);
                    }
                    self.formats = std::mem::take(&mut recv.data);
                    let mut packets = Packets::zeroed(lanes);
                    for lane in link.lanes(&cx.g.layout) {
                        let size = printf::args_size(&self.formats[lane as usize], self.packed);
                        self.arg_sizes[lane as usize] = size;
                        packets.set_word(lane, 0, size);
                    }
                    self.stage = PrintfStage::SendArgSizes(packets);
                }
                PrintfStage::SendArgSizes(packets) => {
                    if !link.try_send(&cx.g, cx.mem, packets)? {
                        return Ok(Progress::Pending);
                    }
                    self.stage = PrintfStage::Args(RecvN::new(lanes));
                }
                PrintfStage::Args(recv) => {
                    if !recv.advance(link, &cx.g, cx.mem, cx.limit)? {
                        return Ok(Progress::Pending);
                    }
                    for lane in link.lanes(&cx.g.layout) {
                        let (expected, got) = (self.arg_sizes[lane as usize], recv.sizes[lane as usize]);
                        if expected != got {
                            return Err(RpcError::ArgumentSize {
                                port: link.index,
                                opcode: link.opcode,
                                lane,
                                expected,
                                got,
                            });
                        }
                    }
                    self.args = std::mem::take(&mut recv.data);
                    for lane in link.lanes(&cx.g.layout) {
                        let l = lane as usize;
                        self.pending[l] = printf::string_pointers(&self.formats[l], &self.args[l], self.packed).into();
                    }
                    self.stage = match self.string_request(link, cx) {
                        Some(request) => PrintfStage::RequestStrings(request),
                        None => PrintfStage::SendResult(self.print(link, cx)),
                    };
                }
                PrintfStage::RequestStrings(packets) => {
                    if !link.try_send(&cx.g, cx.mem, packets)? {
                        return Ok(Progress::Pending);
                    }
                    self.stage = PrintfStage::Strings(RecvN::new(lanes));
                }
                PrintfStage::Strings(recv) => {
                    if !recv.advance(link, &cx.g, cx.mem, cx.limit)? {
                        return Ok(Progress::Pending);
                    }
                    let data = std::mem::take(&mut recv.data);
                    for lane in link.lanes(&cx.g.layout) {
                        let l = lane as usize;
                        if recv.sizes[l] > 0 {
                            let mut s = data[l].clone();
                            if let Some(nul) = s.iter().position(|&b| b == 0) {
                                s.truncate(nul);
                            }
                            self.strings[l].push(s);
                        }
                    }
                    self.stage = match self.string_request(link, cx) {
                        Some(request) => PrintfStage::RequestStrings(request),
                        None => PrintfStage::SendResult(self.print(link, cx)),
                    };
                }
                PrintfStage::SendResult(packets) => {
                    return Ok(if link.try_send(&cx.g, cx.mem, packets)? {
                        Progress::Done
                    } else {
                        Progress::Pending
                    });
                }
            }
        }
    }
}
