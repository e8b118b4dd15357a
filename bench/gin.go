package bench

import (
	"github.com/gin-gonic/gin"
	"github.com/gin-gonic/gin/binding"
	"github.com/go-playground/validator/v10"
)

func init() {
	gin.SetMode(gin.ReleaseMode) // no debug route printing
	if v, ok := binding.Validator.Engine().(*validator.Validate); ok {
		useJSONNames(v)
	}
}

// NewGin is the service in Gin: handlers record failures with c.Error and
// an error middleware writes the envelope, CustomRecoveryWithWriter
// (writing to io.Discard) answers panics, ShouldBindJSON validates with
// Gin's validator/v10 (`binding` tags), NoRoute answers the 404. Release
// mode, no logger middleware.
func NewGin(middleware int) Impl {
	r := gin.New()
	r.HandleMethodNotAllowed = false
	r.Use(gin.CustomRecoveryWithWriter(nil, func(c *gin.Context, _ any) { // nil: no panic log
		c.AbortWithStatusJSON(500, InternalEnvelope)
	}))
	r.Use(ginErrors)
	for range middleware {
		r.Use(func(c *gin.Context) { c.Next() })
	}
	r.NoRoute(func(c *gin.Context) {
		c.JSON(404, NotFoundEnvelope(c.Request.Method, c.Request.URL.Path))
	})
	r.GET("/hello", func(c *gin.Context) {
		c.JSON(200, Hello{Message: HelloMessage})
	})
	r.GET("/users/:id", func(c *gin.Context) {
		id := c.Param("id")
		if id == MissingUserID {
			_ = c.Error(ErrUserNotFound)
			return
		}
		c.JSON(200, NewUser(id))
	})
	r.GET("/error", func(c *gin.Context) { _ = c.Error(ErrUserNotFound) })
	r.GET("/panic", func(c *gin.Context) {
		panic(ErrBoom)
	})
	r.POST("/orders", func(c *gin.Context) {
		var o Order
		if err := c.ShouldBindJSON(&o); err != nil {
			_ = c.Error(validationFailure(err))
			return
		}
		c.JSON(201, &o)
	})
	return Impl{HTTP: r}
}

// ginErrors writes the envelope of the last error a handler recorded.
func ginErrors(c *gin.Context) {
	c.Next()
	if len(c.Errors) == 0 || c.Writer.Written() {
		return
	}
	status, env := ToEnvelope(c.Errors.Last().Err)
	c.JSON(status, env)
}
