package runtime

import (
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
)

// goja's compiler is quadratic in the depth of an operator chain: for each
// node of `1+1+...+1` it asks whether the subtree is constant and where it
// starts (BinaryExpression.Idx0), and both walk the chain down to its first
// operand. A 40,000-term chain (80 KB) took 14.5 s to compile. breakDeepChains
// puts a barrier every chainBarrier levels: the operand becomes `(0, operand)`,
// a sequence whose value is the operand's, which goja neither folds as a
// constant nor walks through for a position (its first element, the 0,
// carries the operand's position, so errors still point at the right
// place). Evaluation order and results are unchanged; constant folding stops
// at the barriers, which only a chain that long notices.
const chainBarrier = 16

// breakDeepChains inserts the barriers; it only looks at programs long
// enough to hold a chain that matters.
func breakDeepChains(prog *ast.Program, js string) {
	if len(js) < 4<<10 {
		return
	}
	walkAST(prog, func(node any) bool {
		b, ok := node.(*ast.BinaryExpression)
		if !ok {
			return true
		}
		breakSide(b, true)
		breakSide(b, false)
		return true
	})
}

// breakSide follows the chain under b on one side (Left or Right), putting
// a barrier every chainBarrier levels.
func breakSide(b *ast.BinaryExpression, left bool) {
	depth := 0
	var leftmost file.Idx // where every operand of a left chain starts: found once
	for cur := b; ; {
		next := cur.Right
		if left {
			next = cur.Left
		}
		child, ok := next.(*ast.BinaryExpression)
		if !ok {
			return
		}
		depth++
		if depth%chainBarrier == 0 {
			start := leftmost
			if !left || start == 0 {
				start = startOf(child)
				if left {
					leftmost = start
				}
			}
			barrier := &ast.SequenceExpression{Sequence: []ast.Expression{
				&ast.NumberLiteral{Idx: start, Literal: "0", Value: int64(0)}, child}}
			if left {
				cur.Left = barrier
			} else {
				cur.Right = barrier
			}
		}
		cur = child
	}
}

// startOf is where an expression starts, without goja's recursive Idx0 on
// the long chain (the barriers below it stop that walk).
func startOf(e *ast.BinaryExpression) file.Idx {
	var x ast.Expression = e
	for {
		switch v := x.(type) {
		case *ast.BinaryExpression:
			x = v.Left
		case *ast.SequenceExpression:
			return v.Sequence[0].Idx0()
		default:
			return x.Idx0()
		}
	}
}
