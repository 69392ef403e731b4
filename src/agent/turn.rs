//! One turn: the rounds of requests to the model and tool calls that
//! answer one user message, until the model answers in text.
//!
//! A round asks the model ([`Chat`]) for the conversation as it stands. An
//! answer without tool calls ends the turn. An answer with calls is
//! recorded in the conversation ([`Conversation`]) before its calls run
//! ([`Tools`]; each call's result follows the message that made it, or the
//! next request is rejected), and the next round asks again. A round that
//! cannot be recorded whole is taken out again, whole: a call without its
//! result would make every later request of the conversation invalid.
//!
//! Nothing here blocks, allocates or reads a clock: the traits do the I/O,
//! and what went wrong comes back as a [`TurnError`] value that the caller
//! turns into text for the user.

/// How a round's request offers the tools, and how its answer's calls are
/// found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolMode {
    /// The tools are in the request; the answer's calls come as the API
    /// returns them.
    Native,
    /// Native, and an answer that is exactly one call written as text runs
    /// as that call (for models that sometimes write their calls).
    NativeWithTextFallback,
    /// No tools in the request (the system prompt describes them); the
    /// calls are written in the answer's text.
    Text,
}

/// What a request for one round came back with.
pub trait Answer {
    /// How many tool calls it makes (0: the model answered in text).
    fn call_count(&self) -> usize;
    /// Its text (empty when it has none).
    fn text(&self) -> &[u8];
}

/// The conversation a turn extends.
pub trait Conversation<A: Answer> {
    /// How many messages it holds (where a round starts).
    fn len(&self) -> usize;
    /// Whether it holds no message.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Take out the messages from `len` on (needs no memory).
    fn truncate(&mut self, len: usize);
    /// Add the model's answer as the assistant's message; false without
    /// memory.
    fn record_answer(&mut self, answer: &A) -> bool;
    /// Add `text` as the assistant's message (direct-output tools' results
    /// answered for it); false without memory.
    fn record_text(&mut self, text: &[u8]) -> bool;
}

/// The model.
pub trait Chat<A: Answer, V: Conversation<A>> {
    /// Why a request failed.
    type Failure;
    /// One request for `conversation` as it stands, the tools offered as
    /// `mode` says.
    fn ask(&mut self, conversation: &V, mode: ToolMode) -> Result<A, Self::Failure>;
    /// [`ToolMode::NativeWithTextFallback`]: if `answer` (which makes no
    /// native call) is exactly one call written as text, make it that call
    /// and say so.
    fn adopt_text_call(&mut self, answer: &mut A) -> bool;
}

/// The tools, run for the calls of an answer.
pub trait Tools<A: Answer, V: Conversation<A>> {
    /// Run the answer's call number `index` and add its result to the
    /// conversation (the tool's text, or an error the model can act on);
    /// false when the result could not be added (no memory).
    fn answer_call(&mut self, conversation: &mut V, answer: &A, index: usize) -> bool;
    /// [`ToolMode::Text`]: run the calls written in `answer`'s text and add
    /// the exchange to the conversation. `None`: the text holds no call;
    /// `Some(false)`: a result could not be added.
    fn answer_text_calls(&mut self, conversation: &mut V, answer: &A) -> Option<bool>;
    /// The results of the round's direct-output tools, which answer the
    /// user instead of the model; `None` when no such tool succeeded.
    fn direct_answer(&mut self) -> Option<&[u8]>;
}

/// What a turn asks of the one who runs it, between rounds.
pub trait TurnEvents {
    /// Whether the agent is stopping (the turn ends before its next round).
    fn stopping(&self) -> bool;
}

/// The settings of one turn (a snapshot: they do not change during it).
#[derive(Clone, Copy, Debug)]
pub struct TurnSettings {
    /// Rounds before the turn gives up (at least 1).
    pub max_rounds: usize,
    /// How the tools are offered.
    pub mode: ToolMode,
}

/// What answers the user at the end of a turn.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply<A> {
    /// The model's answer (non-empty text).
    Model(A),
    /// The results of direct-output tools ([`Tools::direct_answer`]): the
    /// model was not asked again.
    Tools,
}

/// Why a turn ended without the model's answer.
#[derive(Debug, PartialEq, Eq)]
pub enum TurnError<F> {
    /// The agent is stopping.
    Stopping,
    /// A request to the model failed.
    Request(F),
    /// The model's answer was empty.
    EmptyAnswer,
    /// No memory to add the model's tool calls to the conversation.
    CallsNotRecorded,
    /// No memory to add a tool's result to the conversation (the round was
    /// taken out).
    ResultNotRecorded,
    /// The model still called tools after this many rounds.
    RoundLimit(usize),
}

/// Run the rounds for the message just added to `conversation`: the
/// model's answer (non-empty text) or the direct-output tools' results,
/// or why there is none.
pub fn run<A, V, C, T, E>(
    settings: TurnSettings,
    conversation: &mut V,
    chat: &mut C,
    tools: &mut T,
    events: &E,
) -> Result<Reply<A>, TurnError<C::Failure>>
where
    A: Answer,
    V: Conversation<A>,
    C: Chat<A, V>,
    T: Tools<A, V>,
    E: TurnEvents,
{
    let rounds = settings.max_rounds.max(1);
    for _round in 0..rounds {
        if events.stopping() {
            return Err(TurnError::Stopping);
        }
        let mut answer = chat
            .ask(conversation, settings.mode)
            .map_err(TurnError::Request)?;
        if settings.mode == ToolMode::NativeWithTextFallback && answer.call_count() == 0 {
            chat.adopt_text_call(&mut answer);
        }
        let round_start = conversation.len();
        if settings.mode == ToolMode::Text && answer.call_count() == 0 {
            match tools.answer_text_calls(conversation, &answer) {
                Some(true) => match direct_reply(conversation, tools) {
                    Some(reply) => return Ok(reply),
                    None => continue,
                },
                Some(false) => {
                    conversation.truncate(round_start);
                    return Err(TurnError::ResultNotRecorded);
                }
                None => {}
            }
        }
        // The answer goes in first: tool results must follow the message
        // that called them.
        let recorded = conversation.record_answer(&answer);
        if answer.call_count() == 0 {
            // A final answer that could not be recorded is still the
            // answer; the conversation only lacks it.
            return if answer.text().is_empty() {
                Err(TurnError::EmptyAnswer)
            } else {
                Ok(Reply::Model(answer))
            };
        }
        if !recorded {
            return Err(TurnError::CallsNotRecorded);
        }
        let mut all = true;
        for index in 0..answer.call_count() {
            all &= tools.answer_call(conversation, &answer, index);
        }
        if !all {
            conversation.truncate(round_start);
            return Err(TurnError::ResultNotRecorded);
        }
        if let Some(reply) = direct_reply(conversation, tools) {
            return Ok(reply);
        }
    }
    Err(TurnError::RoundLimit(rounds))
}

/// After a round whose results are all recorded: when direct-output tools
/// answered, their results are the reply, recorded as the assistant's
/// answer (a reply that could not be recorded is still the reply).
fn direct_reply<A, V, T>(conversation: &mut V, tools: &mut T) -> Option<Reply<A>>
where
    A: Answer,
    V: Conversation<A>,
    T: Tools<A, V>,
{
    let text = tools.direct_answer()?;
    conversation.record_text(text);
    Some(Reply::Tools)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::VecDeque;
    use alloc::string::{String, ToString};
    use alloc::vec;
    use alloc::vec::Vec;

    /// A scripted answer: its calls (tool names) and text.
    #[derive(Clone, Debug, PartialEq)]
    struct Said {
        calls: Vec<String>,
        text: String,
    }

    impl Answer for Said {
        fn call_count(&self) -> usize {
            self.calls.len()
        }
        fn text(&self) -> &[u8] {
            self.text.as_bytes()
        }
    }

    fn text(t: &str) -> Said {
        Said {
            calls: vec![],
            text: t.to_string(),
        }
    }

    fn calls(names: &[&str]) -> Said {
        Said {
            calls: names.iter().map(|n| n.to_string()).collect(),
            text: String::new(),
        }
    }

    /// The conversation as lines; `room` messages more fit.
    struct Lines {
        lines: Vec<String>,
        room: usize,
    }

    impl Lines {
        fn push(&mut self, line: String) -> bool {
            if self.room == 0 {
                return false;
            }
            self.room -= 1;
            self.lines.push(line);
            true
        }
    }

    impl Conversation<Said> for Lines {
        fn len(&self) -> usize {
            self.lines.len()
        }
        fn truncate(&mut self, len: usize) {
            self.lines.truncate(len);
        }
        fn record_answer(&mut self, answer: &Said) -> bool {
            let line = if answer.calls.is_empty() {
                alloc::format!("assistant: {}", answer.text)
            } else {
                alloc::format!("assistant calls {}", answer.calls.join(","))
            };
            self.push(line)
        }
        fn record_text(&mut self, text: &[u8]) -> bool {
            let line = alloc::format!("assistant: {}", String::from_utf8_lossy(text));
            self.push(line)
        }
    }

    /// The model: scripted answers, and what each request saw.
    struct Model {
        answers: VecDeque<Result<Said, &'static str>>,
        asked: Vec<(usize, ToolMode)>,
    }

    impl Chat<Said, Lines> for Model {
        type Failure = &'static str;
        fn ask(&mut self, conversation: &Lines, mode: ToolMode) -> Result<Said, &'static str> {
            self.asked.push((conversation.len(), mode));
            self.answers.pop_front().unwrap_or(Err("no more answers"))
        }
        fn adopt_text_call(&mut self, answer: &mut Said) -> bool {
            match answer.text.strip_prefix("CALL ") {
                Some(name) => {
                    *answer = calls(&[name]);
                    true
                }
                None => false,
            }
        }
    }

    /// Tools that answer with their name; text calls are `TEXTCALL name`.
    /// A tool named `direct*` is a direct-output tool.
    struct Board {
        ran: Vec<String>,
        direct: String,
    }

    impl Board {
        fn ran(&mut self, name: &str) {
            self.ran.push(name.to_string());
            if name.starts_with("direct") {
                if !self.direct.is_empty() {
                    self.direct.push('\n');
                }
                self.direct.push_str(name);
            }
        }
    }

    impl Tools<Said, Lines> for Board {
        fn answer_call(&mut self, conversation: &mut Lines, answer: &Said, index: usize) -> bool {
            let name = answer.calls[index].clone();
            self.ran(&name);
            conversation.push(alloc::format!("tool {name}: ok"))
        }
        fn answer_text_calls(&mut self, conversation: &mut Lines, answer: &Said) -> Option<bool> {
            let name = answer.text.strip_prefix("TEXTCALL ")?;
            self.ran(name);
            Some(
                conversation.push(alloc::format!("assistant: {}", answer.text))
                    && conversation.push(alloc::format!("user: result of {name}")),
            )
        }
        fn direct_answer(&mut self) -> Option<&[u8]> {
            Some(self.direct.as_bytes()).filter(|d| !d.is_empty())
        }
    }

    struct Running(bool);
    impl TurnEvents for Running {
        fn stopping(&self) -> bool {
            !self.0
        }
    }

    /// What one turn did.
    struct Ran {
        got: Result<Reply<Said>, TurnError<&'static str>>,
        /// The conversation after it.
        lines: Vec<String>,
        /// What each request saw: messages, mode.
        asked: Vec<(usize, ToolMode)>,
        /// The tools run, in order.
        tools: Vec<String>,
    }

    /// A turn against scripted answers, with room for `room` more
    /// messages after the user's.
    fn turn(
        max_rounds: usize,
        mode: ToolMode,
        room: usize,
        answers: Vec<Result<Said, &'static str>>,
    ) -> Ran {
        turn_while(true, max_rounds, mode, room, answers)
    }

    fn turn_while(
        running: bool,
        max_rounds: usize,
        mode: ToolMode,
        room: usize,
        answers: Vec<Result<Said, &'static str>>,
    ) -> Ran {
        let mut conversation = Lines {
            lines: vec!["user: hi".to_string()],
            room,
        };
        let mut chat = Model {
            answers: answers.into(),
            asked: vec![],
        };
        let mut tools = Board {
            ran: vec![],
            direct: String::new(),
        };
        let settings = TurnSettings { max_rounds, mode };
        let got = run(
            settings,
            &mut conversation,
            &mut chat,
            &mut tools,
            &Running(running),
        );
        Ran {
            got,
            lines: conversation.lines,
            asked: chat.asked,
            tools: tools.ran,
        }
    }

    use ToolMode::{Native, NativeWithTextFallback, Text};

    #[test]
    fn a_text_answer_ends_the_turn_and_is_recorded() {
        let ran = turn(5, Native, 10, vec![Ok(text("hello"))]);
        assert_eq!(ran.got, Ok(Reply::Model(text("hello"))));
        assert_eq!(ran.lines, ["user: hi", "assistant: hello"]);
        assert_eq!(ran.asked, [(1, Native)]);
    }

    #[test]
    fn calls_run_in_order_after_their_message_then_the_model_is_asked_again() {
        let ran = turn(
            5,
            Native,
            10,
            vec![Ok(calls(&["a", "b"])), Ok(text("done"))],
        );
        assert_eq!(ran.got, Ok(Reply::Model(text("done"))));
        assert_eq!(ran.tools, ["a", "b"]);
        assert_eq!(
            ran.lines,
            [
                "user: hi",
                "assistant calls a,b",
                "tool a: ok",
                "tool b: ok",
                "assistant: done"
            ]
        );
        // The second request saw the calls and both results.
        assert_eq!(ran.asked, [(1, Native), (4, Native)]);
    }

    #[test]
    fn the_round_limit_ends_a_turn_that_keeps_calling() {
        let ran = turn(3, Native, 100, (0..5).map(|_| Ok(calls(&["a"]))).collect());
        assert_eq!(ran.got, Err(TurnError::RoundLimit(3)));
        assert_eq!(ran.tools.len(), 3);
        // Zero rounds configured still means one.
        let ran = turn(0, Native, 100, vec![Ok(calls(&["a"]))]);
        assert_eq!(ran.got, Err(TurnError::RoundLimit(1)));
    }

    #[test]
    fn failures_and_stopping_are_values() {
        let ran = turn(5, Native, 10, vec![Err("HTTP 500")]);
        assert_eq!(ran.got, Err(TurnError::Request("HTTP 500")));
        let ran = turn(5, Native, 10, vec![Ok(text(""))]);
        assert_eq!(ran.got, Err(TurnError::EmptyAnswer));
        let ran = turn_while(false, 5, Native, 10, vec![Ok(text("never asked"))]);
        assert_eq!(ran.got, Err(TurnError::Stopping));
        assert!(ran.asked.is_empty());
    }

    #[test]
    fn a_round_that_cannot_be_recorded_whole_is_taken_out() {
        // Room for the calls' message and one result of two.
        let ran = turn(5, Native, 2, vec![Ok(calls(&["a", "b"]))]);
        assert_eq!(ran.got, Err(TurnError::ResultNotRecorded));
        assert_eq!(ran.lines, ["user: hi"]);
        // No room even for the calls: nothing runs.
        let ran = turn(5, Native, 0, vec![Ok(calls(&["a"]))]);
        assert_eq!(ran.got, Err(TurnError::CallsNotRecorded));
        assert!(ran.tools.is_empty());
        // A final answer without room is still the answer.
        let ran = turn(5, Native, 0, vec![Ok(text("hello"))]);
        assert_eq!(ran.got, Ok(Reply::Model(text("hello"))));
    }

    #[test]
    fn text_mode_runs_written_calls_and_asks_again() {
        let ran = turn(5, Text, 10, vec![Ok(text("TEXTCALL a")), Ok(text("done"))]);
        assert_eq!(ran.got, Ok(Reply::Model(text("done"))));
        assert_eq!(ran.tools, ["a"]);
        assert_eq!(
            ran.lines,
            [
                "user: hi",
                "assistant: TEXTCALL a",
                "user: result of a",
                "assistant: done"
            ]
        );
        assert_eq!(ran.asked, [(1, Text), (3, Text)]);
        // Without room for the exchange, the round goes.
        let ran = turn(5, Text, 1, vec![Ok(text("TEXTCALL a"))]);
        assert_eq!(ran.got, Err(TurnError::ResultNotRecorded));
        assert_eq!(ran.lines, ["user: hi"]);
    }

    #[test]
    fn the_fallback_runs_one_written_call_natively_and_only_in_its_mode() {
        let ran = turn(
            5,
            NativeWithTextFallback,
            10,
            vec![Ok(text("CALL a")), Ok(text("done"))],
        );
        assert_eq!(ran.got, Ok(Reply::Model(text("done"))));
        assert_eq!(ran.tools, ["a"]);
        assert_eq!(ran.lines[1], "assistant calls a");
        // In native mode the same text is the answer.
        let ran = turn(5, Native, 10, vec![Ok(text("CALL a"))]);
        assert_eq!(ran.got, Ok(Reply::Model(text("CALL a"))));
        assert!(ran.tools.is_empty());
    }

    #[test]
    fn a_direct_output_result_is_the_reply_and_the_model_is_not_asked_again() {
        let ran = turn(
            5,
            Native,
            10,
            vec![Ok(calls(&["a", "direct_status"])), Ok(text("never asked"))],
        );
        assert_eq!(ran.got, Ok(Reply::Tools));
        assert_eq!(ran.tools, ["a", "direct_status"]);
        // Every call ran and was recorded, then the reply as the answer.
        assert_eq!(
            ran.lines,
            [
                "user: hi",
                "assistant calls a,direct_status",
                "tool a: ok",
                "tool direct_status: ok",
                "assistant: direct_status"
            ]
        );
        assert_eq!(ran.asked, [(1, Native)]);
        // In text mode too.
        let ran = turn(5, Text, 10, vec![Ok(text("TEXTCALL direct_x"))]);
        assert_eq!(ran.got, Ok(Reply::Tools));
        assert_eq!(
            ran.lines.last().map(String::as_str),
            Some("assistant: direct_x")
        );
        assert_eq!(ran.asked.len(), 1);
        // A round taken out for want of memory is not answered directly.
        let ran = turn(5, Native, 2, vec![Ok(calls(&["direct_a", "direct_b"]))]);
        assert_eq!(ran.got, Err(TurnError::ResultNotRecorded));
        // Without room for the reply's record, it is still the reply.
        let ran = turn(5, Native, 2, vec![Ok(calls(&["direct_a"]))]);
        assert_eq!(ran.got, Ok(Reply::Tools));
        assert_eq!(ran.lines.len(), 3);
    }
}
