package testenv

import "net"

// AcceptEach accepts l's connections on a goroutine of its own until l is
// closed, and hands each to serve, on that goroutine, in turn.
func AcceptEach(l net.Listener, serve func(net.Conn)) {
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			serve(c)
		}
	}()
}
