/// How long the harness waits. Every wait ends as soon as its signal arrives (a name on the bus,
/// a line on stdout, a socket answering, a condition holding); these deadlines only bound a wait
/// that never ends, so they are long enough for a loaded 2-core machine: a slow start is slow,
/// not a failure.
public enum HarnessDeadline {
    /// From a peer's spawn (once it holds a start slot) to its readiness signal.
    public static let peerStart: Duration = .seconds(90)
    /// For a condition on what a peer or the code under test does.
    public static let condition: Duration = .seconds(60)
    /// For a child that runs to completion (a CLI run, a decoder).
    public static let exit: Duration = .seconds(120)
}
