import Testing

@testable import Workouts

/// Every (state, operation) pair and the states it must pass through; empty means illegal.
private let table: [(WorkoutSessionState, WorkoutSessionOperation, [WorkoutSessionState])] = [
    (.notStarted, .prepare, [.prepared]), (.notStarted, .start, [.running]), (.notStarted, .pause, []),
    (.notStarted, .resume, []), (.notStarted, .stop, []), (.notStarted, .end, [.ended]),
    (.prepared, .prepare, []), (.prepared, .start, [.running]), (.prepared, .pause, []), (.prepared, .resume, []),
    (.prepared, .stop, []), (.prepared, .end, [.ended]),
    (.running, .prepare, []), (.running, .start, []), (.running, .pause, [.paused]), (.running, .resume, []),
    (.running, .stop, [.stopped]), (.running, .end, [.stopped, .ended]),
    (.paused, .prepare, []), (.paused, .start, []), (.paused, .pause, []), (.paused, .resume, [.running]),
    (.paused, .stop, [.stopped]), (.paused, .end, [.stopped, .ended]),
    (.stopped, .prepare, []), (.stopped, .start, []), (.stopped, .pause, []), (.stopped, .resume, []),
    (.stopped, .stop, []), (.stopped, .end, [.ended]),
    (.ended, .prepare, []), (.ended, .start, []), (.ended, .pause, []), (.ended, .resume, []), (.ended, .stop, []),
    (.ended, .end, []),
]

@Suite("Workout session state machine")
struct WorkoutSessionStateMachineTests {
    @Test("the table covers every state and operation")
    func tableIsComplete() {
        #expect(table.count == WorkoutSessionState.allCases.count * WorkoutSessionOperation.allCases.count)
    }

    @Test("every legal and illegal transition", arguments: table.indices)
    func transition(_ index: Int) {
        let (state, operation, expected) = table[index]
        var machine = WorkoutSessionStateMachine(state: state)
        if expected.isEmpty {
            #expect(throws: WorkoutSessionError.invalidTransition(from: state, operation: operation)) {
                _ = try machine.apply(operation)
            }
            #expect(machine.state == state, "a refused operation leaves the state alone")
        } else {
            let transitions = try? machine.apply(operation)
            #expect(transitions?.map(\.to) == expected)
            #expect(transitions?.first?.from == state)
            #expect(machine.state == expected.last)
        }
    }

    @Test("stopped and ended sessions never run again")
    func noRestart() {
        for state in [WorkoutSessionState.stopped, .ended] {
            for operation in [WorkoutSessionOperation.start, .resume, .prepare] {
                var machine = WorkoutSessionStateMachine(state: state)
                #expect(throws: WorkoutSessionError.self) { _ = try machine.apply(operation) }
            }
        }
    }
}
