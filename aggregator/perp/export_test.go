package perp

// PositionsBySpan lets tests replay positions a chosen number of heights
// at a time.
var PositionsBySpan = positionsBySpan
