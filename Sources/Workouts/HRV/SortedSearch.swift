extension Array where Element == Double {
    /// In an ascending array, the index of the first element not below `value` (`count` when none is).
    func firstIndex(notBelow value: Double) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
